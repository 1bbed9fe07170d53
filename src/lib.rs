//! Reprise: record a desktop task once, replay it on a screen that has drifted.
//!
//! This library is the application behind the `reprise` binary, one folder a
//! layer, each using only those listed after it:
//!
//! - [`cli`]: the command line, what each command does, exit codes;
//! - [`fleet`]: replay jobs across many desktops (server, worker, client);
//! - [`record`]: the recorder;
//! - [`replay`]: the run: the live desktop behind the strategies' port, the
//!   replay loop's set-up, batches (`--each`), how a run stopped;
//! - [`present`]: how recordings and runs look to a person (tables, trees,
//!   HTML reports, overlays);
//! - [`vision`]: OCR, an external segmenter and the segmentation cache;
//! - [`llm`]: the model providers;
//! - [`store`]: the SQLite store, frames' encoding and the export file;
//! - [`settings`]: the config file, time settings, refused values;
//! - [`platform`]: the only code that calls OS APIs.

pub mod cli;
pub mod fleet;
pub mod llm;
pub mod platform;
pub mod present;
pub mod record;
pub mod replay;
pub mod settings;
pub mod store;
#[cfg(any(test, feature = "test-support"))]
#[doc(hidden)]
pub mod testing;
pub mod vision;
