//! `reprise completions` and `reprise man`.

use anyhow::{Context as _, Result};

use super::output::print_text;
use crate::cli::Cli;
use crate::present;

/// `reprise completions SHELL`.
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut command = <Cli as clap::CommandFactory>::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "reprise", &mut out);
    print_text(&String::from_utf8_lossy(&out))
}

/// `reprise man`: the top page on stdout, or every command's page in `dir`.
pub fn man_pages(dir: Option<&std::path::Path>) -> Result<()> {
    let command = <Cli as clap::CommandFactory>::command();
    let Some(dir) = dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(command)
            .render(&mut out)
            .context("render the manual page")?;
        return print_text(&String::from_utf8_lossy(&out));
    };
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    let mut written = 0;
    let mut pages = vec![(String::from("reprise"), command.clone())];
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        pages.push((format!("reprise-{}", sub.get_name()), sub.clone()));
    }
    for (name, page) in pages {
        let mut out = Vec::new();
        clap_mangen::Man::new(page)
            .title(name.clone())
            .render(&mut out)
            .context("render a manual page")?;
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, out).with_context(|| format!("write {}", path.display()))?;
        written += 1;
    }
    println!(
        "wrote {} in {}",
        present::plural(written, "manual page"),
        dir.display()
    );
    Ok(())
}
