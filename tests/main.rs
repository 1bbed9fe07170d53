//! Reprise's integration tests: one binary that drives the real `reprise`
//! command line, on real X displays (Xvfb with openbox) where it needs one.

mod cli;
mod fleet;
mod harness;
mod identity;
mod llm;
mod models;
mod record;
mod replay;
mod secrets;
mod segment;
mod visual;
mod watched;
