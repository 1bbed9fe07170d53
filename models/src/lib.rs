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

/// `Debug` for a type that holds what cannot be shown (a handle, a port, a
/// model client): its name, and what says which one it is where given (a
/// field, or what a closure reads off it).
///
/// `debug_showing!(Reader)`, `debug_showing!(Capture, rect)`,
/// `debug_showing!(Strategy, steps: |s| s.steps.len())`.
#[macro_export]
macro_rules! debug_showing {
    ($type:ident) => {
        impl ::std::fmt::Debug for $type {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($type)).finish_non_exhaustive()
            }
        }
    };
    ($type:ident, $field:ident) => {
        impl ::std::fmt::Debug for $type {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($type))
                    .field(stringify!($field), &self.$field)
                    .finish_non_exhaustive()
            }
        }
    };
    ($type:ident, $name:ident: $read:expr) => {
        impl ::std::fmt::Debug for $type {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                let read: fn(&$type) -> _ = $read;
                f.debug_struct(stringify!($type))
                    .field(stringify!($name), &read(self))
                    .finish_non_exhaustive()
            }
        }
    };
}
