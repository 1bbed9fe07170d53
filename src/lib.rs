//! Reprise: record a desktop task once, replay it on a screen that has drifted.
//!
//! This library is the application behind the `reprise` binary: the command
//! line, the store, the export format and the presentation of recordings.

pub mod archive;
pub mod bench;
pub mod cli;
pub mod commands;
pub mod config;
pub mod describe;
pub mod durations;
pub mod exit;
pub mod fleet;
pub mod frames;
pub mod llm;
pub mod overlay;
pub mod platform;
pub mod present;
pub mod record;
pub mod replay;
pub mod report;
pub mod rows;
pub mod segment_server;
pub mod store;
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod testing;
pub mod vision_cache;
