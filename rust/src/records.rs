//! How a result record is declared once. `result_record!` writes the struct the core returns and, with the
//! `python` feature, makes that same struct its Python class (frozen, every field a read-only attribute, a
//! repr), so the binding registers it as it is instead of restating its fields in a copy. The only place
//! below `py` that names PyO3, and only behind the feature: `cargo test` builds the core without it.
//!
//! A record whose Python shape differs from the core's (a hit flattens its chunk, a report turns paths into
//! text) keeps its own class in `py/classes.rs`, converted field by field.

/// `result_record! { /// doc  pub struct Name as "PyName" repr("fmt", field, ...) { pub field: Type, ... } }`
macro_rules! result_record {
    (
        $(#[$meta:meta])*
        pub struct $name:ident as $py:tt repr($fmt:tt $(, $rf:ident)*) {
            $($(#[$fmeta:meta])* pub $field:ident : $ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        #[cfg_attr(feature = "python", pyo3::pyclass(module = "funes_py._funes", name = $py, frozen, get_all))]
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        #[cfg(feature = "python")]
        #[pyo3::pymethods]
        impl $name {
            fn __repr__(&self) -> String {
                format!(concat!($py, "(", $fmt, ")") $(, self.$rf)*)
            }
        }
    };
}

pub(crate) use result_record;
