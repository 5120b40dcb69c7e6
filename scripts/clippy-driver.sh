#!/usr/bin/env bash
# Cargo's RUSTC_WORKSPACE_WRAPPER for the lint gate: compiles this crate (and only it) with clippy's lints,
# every warning an error. Dependencies are built as usual and shared with the release build, where
# `cargo clippy` would check all ~460 of them again (40 minutes on 2 cores the first time).
exec "$(rustc --print sysroot)/bin/clippy-driver" "$@" -D warnings
