//! The vision engine's adapters on this side of the strategies' ports: the
//! offline describer's text reader ([`ocr`]), an external segmentation
//! server ([`segment_server`]) and the segmentation cache kept in the store
//! ([`cache`]).

pub mod cache;
pub mod ocr;
pub mod segment_server;
