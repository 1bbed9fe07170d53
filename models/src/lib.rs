//! Reprise's data model: pure data and pure transforms, with no OS, network or I/O.
//!
//! A recording is a list of raw [`ActionEvent`]s plus the [`Screenshot`]s and
//! [`WindowState`]s they link to. [`reduce`] turns the raw events into the
//! parent/child trees that replay works on.

pub mod displaced;
pub mod element;
pub mod event;
pub mod fleet;
pub mod geometry;
pub mod parameter;
pub mod program;
pub mod recording;
pub mod reduce;
pub mod screenshot;
pub mod version;
pub mod window;

pub use element::{ElementIdentity, ElementState, PathStep, WindowIdentity, identity_of};
pub use event::{ActionEvent, EventName, MouseButton};
pub use geometry::{Monitor, Point, Rect, ScreenGeometry, monitor_at};
pub use recording::{
    DoubleClickSettings, FORMAT_VERSION, FormatVersionError, Recording, RecordingBundle,
};
pub use reduce::{ReduceOptions, reduce};
pub use screenshot::Screenshot;
pub use window::{A11yNode, A11yTree, ProcessCommand, WindowState};
