//! Two texts compared line by line, as a person reviews a change: the lines
//! taken out (`-`) and put in (`+`), with two lines of context around each
//! change, and `…` where unchanged lines are left out.

/// The longest texts compared line by line (lines each): longer ones are
/// shown whole, taken out and put in.
const MAX_LINES: usize = 4000;

/// The change from `old` to `new`; empty when they are the same.
pub fn diff(old: &str, new: &str) -> String {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    if old == new {
        return String::new();
    }
    let ops = if old.len().max(new.len()) > MAX_LINES {
        let mut ops: Vec<(char, &str)> = old.iter().map(|line| ('-', *line)).collect();
        ops.extend(new.iter().map(|line| ('+', *line)));
        ops
    } else {
        line_ops(&old, &new)
    };
    let changed: Vec<bool> = ops.iter().map(|(op, _)| *op != ' ').collect();
    let near_change = |idx: usize| {
        let from = idx.saturating_sub(2);
        let to = (idx + 3).min(ops.len());
        changed[from..to].iter().any(|changed| *changed)
    };
    let mut out = String::new();
    let mut skipped = false;
    for (idx, (op, line)) in ops.iter().enumerate() {
        if near_change(idx) {
            out.push(*op);
            out.push(' ');
            out.push_str(line);
            out.push('\n');
            skipped = false;
        } else if !skipped {
            out.push_str("…\n");
            skipped = true;
        }
    }
    out
}

/// The lines of `old` and `new` as kept (` `), taken out (`-`) and put in
/// (`+`), by their longest common subsequence.
fn line_ops<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<(char, &'a str)> {
    let (n, m) = (old.len(), new.len());
    // lcs[i][j]: the longest common subsequence of old[i..] and new[j..].
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::new();
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            ops.push((' ', old[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', old[i]));
            i += 1;
        } else {
            ops.push(('+', new[j]));
            j += 1;
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::diff;

    #[test]
    fn a_change_shows_its_lines_with_context_and_the_rest_left_out() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(diff(old, new), "…\n  c\n  d\n- e\n+ E\n  f\n  g\n…\n");
        assert_eq!(diff(old, old), "");
        assert_eq!(diff("x\n", "x\ny\n"), "  x\n+ y\n");
    }
}
