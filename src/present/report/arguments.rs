//! A run's settings, and its halts and resumptions, as rows of the
//! report's header.

use crate::store::RunArguments;

/// What a run was asked to do, a row a setting, in words: parameters as
/// `name = value` (secrets are never among them), nothing as raw JSON.
pub(super) fn argument_rows(arguments: &RunArguments) -> Vec<(String, String)> {
    let pairs = |pairs: &[(String, String)], between: &str| {
        if pairs.is_empty() {
            return "none".to_owned();
        }
        pairs
            .iter()
            .map(|(a, b)| format!("{a}{between}{b}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let yes_no = |flag: bool| if flag { "yes" } else { "no" }.to_owned();
    let rungs = match (arguments.rungs.structural, arguments.rungs.visual) {
        (true, true) => "structural, then visual",
        (true, false) => "structural only",
        (false, true) => "visual only",
        (false, false) => "none",
    };
    // Each halt and the resumption after it (`reprise resume`) first.
    let mut rows: Vec<(String, String)> = arguments
        .resumptions
        .iter()
        .map(|resumption| {
            (
                "halted, resumed".to_owned(),
                format!(
                    "{}; resumed {} at step {}",
                    resumption.halted,
                    resumption.at,
                    resumption.from_step + 1
                ),
            )
        })
        .collect();
    rows.extend([
        ("parameters".to_owned(), pairs(&arguments.parameters, " = ")),
        (
            "replacements".to_owned(),
            pairs(&arguments.replacements, " → "),
        ),
        ("speed".to_owned(), format!("{}", arguments.speed)),
        ("dry run".to_owned(), yes_no(arguments.dry_run)),
        (
            "retries a step".to_owned(),
            arguments.max_retries.to_string(),
        ),
        (
            "goes past a failed step".to_owned(),
            yes_no(arguments.skip_failures),
        ),
        (
            "an unverified step fails the run".to_owned(),
            yes_no(arguments.require_verified),
        ),
        ("step limit".to_owned(), arguments.max_steps.to_string()),
        ("rungs".to_owned(), rungs.to_owned()),
    ]);
    if let Some(instructions) = &arguments.instructions {
        rows.push(("instructions".to_owned(), instructions.clone()));
    }
    if let Some(batch) = &arguments.batch {
        rows.push((
            "batch".to_owned(),
            format!("{}, row {}", batch.id, batch.row),
        ));
    }
    rows
}
