//! What a person gives Reprise besides the command line's own words: the
//! config file ([`config`]), time settings in seconds ([`durations`]), and the
//! errors for a value that is refused ([`errors`]).

pub mod config;
pub mod durations;
pub mod errors;
