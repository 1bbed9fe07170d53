//! Reprise's integration tests: one binary that drives the real `reprise`
//! command line, on real X displays (Xvfb with openbox) where it needs one.

#[cfg(not(feature = "test-support"))]
compile_error!(
    "the integration tests use the test scaffolding: run them with `--features test-support` (scripts/test.sh does)"
);

mod cli;
mod fleet;
mod harness;
mod house;
mod identity;
mod llm;
mod models;
mod program;
mod record;
mod replay;
mod secrets;
mod segment;
mod trust;
mod visual;
mod watched;
