//! `-o markdown`: the plan as a pull-request comment. A first line with what was compared and the plan,
//! then one collapsible `<details>` block per changed object holding its line diff in a ```diff fence
//! (Secrets masked as everywhere: the entries hold masked objects only). GitHub refuses a comment longer
//! than [`COMMENT_LIMIT`] characters, so objects that do not fit are left out, and a closing note names them.

use super::{Action, Entry, Plan};

/// The longest comment GitHub accepts (characters; we count bytes, never fewer).
pub const COMMENT_LIMIT: usize = 65_536;

/// Room kept for the note on what was left out: its fixed words and a few object names.
const NOTE_ROOM: usize = 2_048;

impl Plan {
    /// The plan in Markdown under [`COMMENT_LIMIT`]; `title` says what was compared (Markdown allowed).
    pub fn render_markdown(&self, title: &str, context: Option<usize>) -> String {
        self.render_markdown_within(title, context, COMMENT_LIMIT)
    }

    /// [`render_markdown`](Self::render_markdown) under `limit` bytes.
    pub fn render_markdown_within(&self, title: &str, context: Option<usize>, limit: usize) -> String {
        let mut out = format!("{title}: **{}**\n", self.plan_line());
        if !self.has_changes() {
            out.push_str("\nNo differences.\n");
            return out;
        }
        let budget = limit.saturating_sub(NOTE_ROOM);
        let mut left_out: Vec<&Entry> = Vec::new();
        for e in self.changes() {
            let block = block(e, context);
            if left_out.is_empty() && out.len() + block.len() <= budget {
                out.push_str(&block);
            } else {
                // Plan order is kept: once one object does not fit, the rest are named in the note.
                left_out.push(e);
            }
        }
        if !left_out.is_empty() {
            out.push_str(&note(&left_out, limit.saturating_sub(out.len())));
        }
        out
    }
}

impl Plan {
    /// The plan as one collapsible section of a larger comment (`helm cozy review`): `summary` (Markdown
    /// allowed in HTML: code spans as `<code>`) and the plan line on the fold, and inside it every changed
    /// object's header and line diff in one fence, cut to fit in `limit` bytes with a line saying how
    /// much was left out.
    pub fn render_markdown_section(&self, summary: &str, context: Option<usize>, limit: usize) -> String {
        let head = format!("\n<details><summary>{summary}: {}</summary>\n\n", self.plan_line());
        let diff = self.render_diff(super::RenderOptions { context, color: false });
        let fence = fence_for(&diff);
        let tail = format!("{fence}\n\n</details>\n");
        let opening = format!("{fence}diff\n");
        let room = limit.saturating_sub(head.len() + opening.len() + tail.len() + 128);
        let mut body = String::new();
        let mut lines = diff.lines();
        for line in lines.by_ref() {
            if body.len() + line.len() + 1 > room {
                let left = 1 + lines.count();
                body.push_str(&format!(
                    "... {left} more line{} not shown here: {} review prints them all\n",
                    if left == 1 { "" } else { "s" },
                    crate::support::output::chart_command()
                ));
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        format!("{head}{opening}{body}{tail}")
    }
}

/// One changed object: a collapsible block with its diff.
fn block(e: &Entry, context: Option<usize>) -> String {
    let diff = e.diff(context, false);
    let fence = fence_for(&diff);
    let notes: String = e
        .drift_ignored
        .iter()
        .map(|p| {
            format!(
                "<code>{}</code>: {}\n\n",
                escape(if p.is_empty() { "the whole object" } else { p }),
                super::DRIFT_IGNORED_NOTE
            )
        })
        .collect();
    format!(
        "\n<details><summary><code>{} {}</code> {}</summary>\n\n{notes}{fence}diff\n{diff}{fence}\n\n</details>\n",
        e.action.marker(),
        escape(&e.id.to_string()),
        verb(e.action),
    )
}

/// The note on objects left out, within `room` bytes (names that would not fit are counted instead).
fn note(left_out: &[&Entry], room: usize) -> String {
    let head = format!(
        "\n**{} changed object{} left out** to keep this comment under {COMMENT_LIMIT} characters; `{} diff` prints them all:",
        left_out.len(),
        if left_out.len() == 1 { "" } else { "s" },
        crate::support::output::chart_command()
    );
    let mut out = head;
    let mut named = 0;
    for e in left_out {
        let item = format!(" `{} {}`", e.action.marker(), escape(&e.id.to_string()));
        // Keep room for the closing count.
        if out.len() + item.len() + 32 > room {
            break;
        }
        out.push_str(&item);
        named += 1;
    }
    if named < left_out.len() {
        out.push_str(&format!(" and {} more", left_out.len() - named));
    }
    out.push_str(".\n");
    out
}

fn verb(action: Action) -> &'static str {
    match action {
        Action::Add => "added",
        Action::Change => "changed",
        Action::Remove => "removed",
        Action::Unchanged => "unchanged",
    }
}

/// A fence longer than any run of backticks in the text, so a diff of a Markdown file cannot close it.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat(longest.max(2) + 1)
}

/// Object names inside HTML: `<`, `>` and `&` would be markup.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::diff::tests::example;
    use crate::compare::diff::{ObjectId, plan};
    use serde_json::json;

    #[test]
    fn one_block_per_changed_object_after_the_plan_line() {
        let md = example().render_markdown("`helm cozy diff web` against the live objects", Some(3));
        let first = md.lines().next().unwrap();
        assert_eq!(
            first,
            "`helm cozy diff web` against the live objects: **Plan: 1 to add, 1 to change, 1 to remove.**"
        );
        assert_eq!(md.matches("<details>").count(), 3);
        assert_eq!(md.matches("</details>").count(), 3);
        assert!(md.contains("<summary><code>~ ConfigMap default/demo</code> changed</summary>\n\n```diff\n...\n"));
        assert!(md.contains("-   c: \"3\"\n+   c: three\n"), "{md}");
        assert!(!md.contains("left out"));
    }

    #[test]
    fn what_does_not_fit_is_named_in_a_note() {
        let desired: Vec<(ObjectId, serde_json::Value)> = (0..200)
            .map(|i| {
                let v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{i:03}"), "namespace": "n"}, "data": {"x": "y".repeat(2000)}});
                (ObjectId::from_object(&v).unwrap(), v)
            })
            .collect();
        let p = plan(desired, Vec::new()).unwrap();
        let md = p.render_markdown("t", Some(3));
        assert!(md.len() <= COMMENT_LIMIT, "{}", md.len());
        let blocks = md.matches("<details>").count();
        assert!(blocks > 10 && blocks < 200, "{blocks}");
        let left = 200 - blocks;
        assert!(
            md.contains(&format!("**{left} changed objects left out** to keep this comment under 65536 characters"))
        );
        assert!(md.contains("`+ ConfigMap n/cm-199`") || md.contains(" more."), "{}", &md[md.len() - 300..]);
    }

    #[test]
    fn a_section_folds_the_whole_diff_and_cuts_what_does_not_fit() {
        let md = example().render_markdown_section("<code>charts/web</code>", Some(3), COMMENT_LIMIT);
        assert!(md.starts_with("\n<details><summary><code>charts/web</code>: Plan: 1 to add, 1 to change, 1 to remove.</summary>\n\n```diff\n"), "{md}");
        assert!(md.ends_with("```\n\n</details>\n"), "{md}");
        assert!(md.contains("-   c: \"3\"\n+   c: three\n"), "{md}");
        assert!(!md.contains("not shown"));
        let cut = example().render_markdown_section("x", Some(3), 400);
        assert!(cut.len() <= 400, "{}", cut.len());
        assert!(cut.contains(" more lines not shown here: helm cozy review prints them all\n"), "{cut}");
        assert!(cut.ends_with("```\n\n</details>\n"), "{cut}");
    }

    #[test]
    fn fences_outlast_backticks_in_the_diff() {
        assert_eq!(fence_for("a ``` b"), "````");
        assert_eq!(fence_for("plain"), "```");
    }

    #[test]
    fn no_changes_say_so() {
        let same = vec![(
            ObjectId::from_object(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}))
                .unwrap(),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
        )];
        let md = plan(same.clone(), same).unwrap().render_markdown("t", Some(3));
        assert_eq!(md, "t: **Plan: 0 to add, 0 to change, 0 to remove.**\n\nNo differences.\n");
    }
}
