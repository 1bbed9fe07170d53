//! The model providers behind the strategies' `Llm` port: three wire formats
//! over HTTP, retries with backoff, a fallback chain, a response cache and the
//! accounting of every call in the store, and the prompt templates.

pub mod chain;
pub mod http;
pub mod prompt;
pub mod provider;
pub mod scrub;
pub mod settings;

pub use chain::ChainLlm;
pub use settings::{LlmFlags, LlmSettings};

/// A model provider answered unusably.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LlmFailure(pub String);

#[cfg(test)]
mod tests;
