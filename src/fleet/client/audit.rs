//! `reprise jobs audit`: the server's audit log, newest first.

use anyhow::Context as _;

use super::{Answered, Api, CALL, print_json};
use crate::fleet::AuditEntry;
use crate::present::terminal_safe;

pub fn list(api: &Api, limit: usize, json: bool) -> anyhow::Result<()> {
    let answer: Answered<Vec<AuditEntry>> = api
        .call(
            reqwest::Method::GET,
            &format!("/api/audit?limit={limit}"),
            None::<&()>,
            CALL,
        )
        .context("read the audit log")?;
    let entries = answer.body.unwrap_or_default();
    if json {
        print_json(&entries);
        return Ok(());
    }
    println!(
        "{:<24}  {:<16}  {:<7}  {:>6}  {:<15}  action",
        "at", "who", "role", "status", "from"
    );
    for entry in entries {
        println!(
            "{:<24}  {:<16}  {:<7}  {:>6}  {:<15}  {}",
            entry.at,
            terminal_safe(&entry.who),
            entry.role,
            entry.status,
            entry.from,
            terminal_safe(&entry.action)
        );
    }
    Ok(())
}
