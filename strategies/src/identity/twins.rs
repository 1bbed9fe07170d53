//! Twins: live elements that fit a recorded one equally. They are listed
//! in reading order (top to bottom, then left to right), and where a person
//! taught which one the step means (its place among as many twins), that
//! one is chosen.

use reprise_models::element::Ordinal;
use reprise_models::{ElementIdentity, Rect};

/// One of several live elements that fit a recorded one equally.
#[derive(Debug, Clone, PartialEq)]
pub struct Twin {
    /// Who it is (`table cell "Maria Olsen" (row: Tromsø)`).
    pub label: String,
    pub rect: Rect,
}

impl Twin {
    /// `table cell "Maria Olsen" (row: Tromsø) at (520, 440)`.
    pub fn words(&self) -> String {
        format!("{} at ({}, {})", self.label, self.rect.left, self.rect.top)
    }
}

/// The one of `best` (the elements that fit `recorded` equally) the step
/// means: the only one, or the one a person taught among as many; else
/// every one, in reading order.
pub(super) fn choose<'a>(
    recorded: &ElementIdentity,
    mut best: Vec<&'a &'a (u32, ElementIdentity)>,
) -> Result<(&'a u32, &'a ElementIdentity), Vec<Twin>> {
    if best.len() == 1 {
        let (idx, identity) = best[0];
        return Ok((idx, identity));
    }
    best.sort_by_key(|(_, identity)| (identity.rect.top, identity.rect.left));
    if let Some(ordinal) = taught(recorded, best.len()) {
        let (idx, identity) = best[ordinal.index as usize - 1];
        return Ok((idx, identity));
    }
    Err(best
        .iter()
        .map(|(_, identity)| Twin {
            label: identity.label(),
            rect: identity.rect,
        })
        .collect())
}

/// What a person taught of `recorded`, where it holds among `n` twins.
pub(super) fn taught(recorded: &ElementIdentity, n: usize) -> Option<Ordinal> {
    recorded.ordinal.filter(|ordinal| {
        n > 1 && ordinal.of as usize == n && (1..=ordinal.of).contains(&ordinal.index)
    })
}
