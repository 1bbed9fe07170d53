//! The fleet's wire types: labels, states, a submission's fields.

use super::*;

#[test]
fn a_worker_needs_every_label_of_the_job() {
    let map = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>()
    };
    assert!(labels_match(&map(&[]), &map(&[("os", "debian")])));
    assert!(labels_match(
        &map(&[("os", "debian")]),
        &map(&[("os", "debian"), ("dpi", "2")])
    ));
    assert!(!labels_match(
        &map(&[("os", "debian")]),
        &map(&[("os", "ubuntu")])
    ));
    assert!(!labels_match(&map(&[("os", "debian")]), &map(&[])));
}

#[test]
fn states_read_back_and_say_which_are_final() {
    for state in JobState::ALL {
        assert_eq!(JobState::parse(state.as_str()), Some(state));
        let json = serde_json::to_string(&state).unwrap();
        assert_eq!(json, format!("\"{}\"", state.as_str()));
    }
    assert!(!JobState::Retrying.is_final());
    assert!(JobState::Abandoned.is_final());
    let dead: Vec<JobState> = JobState::ALL.into_iter().filter(|s| s.is_dead()).collect();
    assert_eq!(
        dead,
        [
            JobState::Failed,
            JobState::Aborted,
            JobState::Abandoned,
            JobState::Expired
        ]
    );
}

#[test]
fn a_submission_with_an_unknown_field_is_refused() {
    let err = serde_json::from_str::<SubmitRequest>(r#"{"recording": "demo", "atempts": 2}"#)
        .unwrap_err();
    assert!(err.to_string().contains("atempts"), "{err}");
    let ok: SubmitRequest = serde_json::from_str(r#"{"recording": "demo"}"#).unwrap();
    assert_eq!(ok.pool, "default");
    assert_eq!(ok.attempts, 1);
    assert_eq!(ok.retry, RetryPolicy::Never);
}
