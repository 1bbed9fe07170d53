//! `reprise jobs audit`: the server's audit log, newest first.

use super::Api;
use crate::fleet::AuditEntry;
use crate::present::terminal_safe;

pub fn list(api: &Api, limit: usize, json: bool) -> anyhow::Result<()> {
    let path = format!("/api/audit?limit={limit}");
    let Some(entries) = api.listed::<AuditEntry>(&path, "read the audit log", json)? else {
        return Ok(());
    };
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
