// placeholder to warm the dependency build
pub fn _warm() {
    let _ = std::any::type_name::<lancedb::Connection>();
    let _ = std::any::type_name::<tokenizers::Tokenizer>();
    let _ = std::any::type_name::<ort::session::Session>();
}
