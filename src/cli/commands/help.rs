//! `reprise completions` and `reprise man`.

use anyhow::{Context as _, Result};

use super::output::print_text;
use crate::cli::Cli;
use crate::present;

/// `reprise completions SHELL`.
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut command = Cli::documented();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "reprise", &mut out);
    print_text(&String::from_utf8_lossy(&out))
}

/// `reprise man`: the top page on stdout, or a page for every command,
/// nested ones included (`reprise-runs-show.1`), in `dir`.
pub fn man_pages(dir: Option<&std::path::Path>) -> Result<()> {
    // (clap's `help` commands are no pages: each page's own text is it.)
    fn without_help(command: clap::Command) -> clap::Command {
        command
            .disable_help_subcommand(true)
            .mut_subcommands(without_help)
    }
    let mut command = without_help(Cli::documented());
    // Built, every command knows its full name ("reprise runs show") and
    // its page's ("reprise-runs-show").
    command.build();
    let Some(dir) = dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(command)
            .render(&mut out)
            .context("render the manual page")?;
        return print_text(&String::from_utf8_lossy(&out));
    };
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    let mut pages = vec![command.clone()];
    let mut next = 0;
    while next < pages.len() {
        let children: Vec<clap::Command> = pages[next]
            .get_subcommands()
            .filter(|sub| !sub.is_hide_set())
            .cloned()
            .collect();
        pages.extend(children);
        next += 1;
    }
    for page in &pages {
        let name = page
            .get_display_name()
            .unwrap_or_else(|| page.get_name())
            .to_owned();
        let mut out = Vec::new();
        clap_mangen::Man::new(page.clone())
            .title(name.clone())
            .render(&mut out)
            .context("render a manual page")?;
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, out).with_context(|| format!("write {}", path.display()))?;
    }
    println!(
        "wrote {} in {}",
        present::plural(pages.len(), "manual page"),
        dir.display()
    );
    Ok(())
}
