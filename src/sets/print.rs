//! The one printer of a set of releases, which `diff --all` ([`super::release_set::diff`]) and `review`
//! ([`super::review::print`]) fill with their entries: a table (who, what would be added, changed and
//! removed, a note), each changed release's diff under a heading, `-o json` as one list, and `-o markdown`
//! as one pull-request comment under GitHub's size limit ([`COMMENT_LIMIT`]).
//!
//! Each command's entry is a [`Member`]: who it is, in each format's words, and its outcome (a plan, or
//! why there is none); the words the command's table is headed with are its [`Words`]. Each command
//! chooses which pieces a format prints (`review -o summary` prints the table alone, `diff --all -o
//! summary` each release's changed objects too).

use serde_json::{Map, Value};

use crate::compare::attention;
use crate::compare::diff::{COMMENT_LIMIT, Format, Plan, RenderOptions};
use crate::support::output::{Paint, Table, Tone};

/// Room kept at the end of a comment for the line on what was left out.
const NOTE_ROOM: usize = 1_024;

/// One release of a set as its command's entry holds it.
pub trait Member {
    /// The command's words (one value per command).
    const WORDS: Words;

    /// Its plan, or why there is none (one line).
    fn outcome(&self) -> &Result<Plan, String>;

    /// Who it is, as the table's first two cells.
    fn who(&self) -> [String; 2];

    /// Who it is, as the Markdown table's first two cells (escaped as they need).
    fn markdown_who(&self) -> [String; 2];

    /// The heading above its diff: `=== HEADING ===`.
    fn heading(&self) -> String;

    /// Its object in `-o json`, in key order, before its `plan` or `error`.
    fn json(&self) -> Map<String, Value>;

    /// What it is, in the line of an image change many share (`7 containers in 6 releases`).
    fn noun(&self) -> &'static str {
        "release"
    }

    /// Its changed `plan` as one section of a Markdown comment (starting with a blank line), within `room`
    /// bytes; `usize::MAX` for the whole section.
    fn markdown_section(&self, plan: &Plan, context: Option<usize>, room: usize) -> String;
}

/// The words a command's set is printed with, beyond each member's own.
pub struct Words {
    /// The command as the line on releases a comment left out names it (after `helm cozy`).
    pub command: &'static str,
    /// The table's first two column names (who), and its last one (the note).
    pub who: [&'static str; 2],
    pub note: &'static str,
    /// The Markdown table's header and its separator line.
    pub markdown_header: &'static str,
    /// The note on a release whose rendering does not change.
    pub unchanged: &'static str,
    /// What the note puts before an error; the table paints a note red when it starts with these words,
    /// so with none (`diff --all`) the note must be empty unless it is an error.
    pub error: &'static str,
    /// The Markdown cell between the last two `|` of a plan's row when its note is empty: one space for
    /// `diff --all`, two for `review`, as each has always written it (GitHub shows both as an empty cell).
    pub markdown_blank: &'static str,
    /// Whether what a reviewer must see first ([`attention`]) is shown: the
    /// note of a changed row counts it, a list after the table says it, and `-o json` carries it.
    pub attention: bool,
}

/// The members whose rendering changes, with their plans, in order.
pub fn changed<M: Member>(members: &[M]) -> impl Iterator<Item = (&M, &Plan)> {
    members.iter().filter_map(|m| m.outcome().as_ref().ok().filter(|p| p.has_changes()).map(|p| (m, p)))
}

/// How many members have an error in place of a plan.
pub fn errors<M: Member>(members: &[M]) -> usize {
    members.iter().filter(|m| m.outcome().is_err()).count()
}

/// A member's note: nothing, the words for no change, or its error.
fn note<M: Member>(m: &M) -> String {
    match m.outcome() {
        Ok(plan) if plan.has_changes() && M::WORDS.attention => attention::of(plan).summary(),
        Ok(plan) if plan.has_changes() => String::new(),
        Ok(_) => M::WORDS.unchanged.to_string(),
        Err(error) => format!("{}{error}", M::WORDS.error),
    }
}

/// The counts' three cells: what would be added, changed and removed; `-` for an error.
fn counts(outcome: &Result<Plan, String>) -> [String; 3] {
    match outcome {
        Ok(plan) => {
            let c = plan.counts();
            [c.add.to_string(), c.change.to_string(), c.remove.to_string()]
        }
        Err(_) => ["-", "-", "-"].map(String::from),
    }
}

/// The table: a row per member, who, ADD CHANGE REMOVE, and the note; counts that are not zero in
/// yellow, errors in red when `color`.
pub fn table<M: Member>(members: &[M], color: bool) -> String {
    let words = &M::WORDS;
    let [who_1, who_2] = words.who;
    let mut t = Table::new([who_1, who_2, "ADD", "CHANGE", "REMOVE", words.note]);
    for m in members {
        let [add, change, remove] = counts(m.outcome());
        let [first, second] = m.who();
        t.row([first, second, add, change, remove, note(m)]);
    }
    t.render_styled(Paint(color), |h, c| match h {
        // Only an error's note starts with the error's words (see Words::error).
        _ if h == words.note && !c.is_empty() && c.starts_with(words.error) => Tone::Bad,
        _ if h == words.note && c.contains("risk") => Tone::Bad,
        "ADD" | "CHANGE" | "REMOVE" if c != "0" && c != "-" => Tone::Warn,
        _ => Tone::Plain,
    })
}

/// What to see first (nothing when none has anything): after the table. An image change seen in more
/// than one container is one line, with how many containers in how many members and where
/// ([`super::image_groups`]); then member by member, its other image changes and its risks.
pub fn attention_list<M: Member>(members: &[M]) -> String {
    let seen = Seen::of(members);
    let mut out = String::new();
    for g in &seen.groups {
        out.push_str(&format!("  image  {}: {}\n", g.change(), seen.places(g, M::heading)));
    }
    for (m, a) in &seen.members {
        let lines = seen.ungrouped(a).lines();
        if lines.is_empty() {
            continue;
        }
        out.push_str(&format!("  {}\n", m.heading()));
        for line in lines {
            out.push_str(&format!("    {line}\n"));
        }
    }
    if out.is_empty() { out } else { format!("\nWhat to see first:\n{out}") }
}

/// What to see first as a Markdown list (nothing when none has anything): after the table.
fn attention_markdown<M: Member>(members: &[M]) -> String {
    let code = |t: &str| format!("`{}`", t.replace('`', "'"));
    let seen = Seen::of(members);
    let mut out = String::new();
    let heading = |m: &M| {
        let [first, second] = m.markdown_who();
        format!("{first} · {second}")
    };
    for g in &seen.groups {
        out.push_str(&format!("- image {}: {}\n", code(&g.change()), seen.places(g, heading)));
    }
    for (m, a) in &seen.members {
        let [first, second] = m.markdown_who();
        for i in &seen.ungrouped(a).images {
            let side = |s: &Option<String>| s.as_deref().map_or("(none)".to_string(), code);
            out.push_str(&format!(
                "- {first} · {second}: image of {}, container {}: {} → {}\n",
                code(&i.object),
                code(&i.container),
                side(&i.before),
                side(&i.after)
            ));
        }
        for r in &a.risks {
            out.push_str(&format!("- {first} · {second}: **risk**: {}: {}\n", code(&r.object), r.what));
        }
    }
    if out.is_empty() { out } else { format!("\n**What to see first**\n\n{out}") }
}

/// What each changed member has to be seen first, and the image changes more than one container shares.
struct Seen<'a, M> {
    members: Vec<(&'a M, attention::Attention)>,
    groups: Vec<super::image_groups::Group>,
}

/// How many members a group's line names before it counts the rest.
const PLACES_NAMED: usize = 3;

impl<'a, M: Member> Seen<'a, M> {
    fn of(members: &'a [M]) -> Self {
        let members: Vec<(&M, attention::Attention)> = changed(members).map(|(m, p)| (m, attention::of(p))).collect();
        let changes = members.iter().enumerate().flat_map(|(i, (_, a))| a.images.iter().map(move |c| (i, c)));
        let groups = super::image_groups::groups(changes);
        Seen { members, groups }
    }

    /// A member's attention without the image changes a group says.
    fn ungrouped(&self, a: &attention::Attention) -> attention::Attention {
        let images = a.images.iter().filter(|i| !self.groups.iter().any(|g| g.has(i))).cloned().collect();
        attention::Attention { images, risks: a.risks.clone() }
    }

    /// `7 containers in 6 releases (a, b, c and 3 more)`, each member named by `name`.
    fn places(&self, g: &super::image_groups::Group, name: impl Fn(&M) -> String) -> String {
        let mut nouns: Vec<(&str, usize)> = Vec::new();
        for &i in &g.members {
            let noun = self.members[i].0.noun();
            match nouns.iter_mut().find(|(n, _)| *n == noun) {
                Some((_, count)) => *count += 1,
                None => nouns.push((noun, 1)),
            }
        }
        let counted: Vec<String> =
            nouns.iter().map(|(n, c)| format!("{c} {n}{}", if *c == 1 { "" } else { "s" })).collect();
        let named: Vec<String> = g.members.iter().take(PLACES_NAMED).map(|&i| name(self.members[i].0)).collect();
        let rest = g.members.len().saturating_sub(PLACES_NAMED);
        let named = if rest > 0 { format!("{} and {rest} more", named.join(", ")) } else { named.join(", ") };
        format!("{} containers in {} ({named})", g.containers, counted.join(" and "))
    }
}

/// Each changed member's plan as `format` prints it (`-o diff` or `-o summary`), under its heading.
pub fn diffs<M: Member>(members: &[M], format: Format, options: RenderOptions) -> String {
    let mut out = String::new();
    for (m, plan) in changed(members) {
        out.push_str(&format!("\n=== {} ===\n", m.heading()));
        out.push_str(&plan.render(format, options, ""));
    }
    out
}

/// `-o json`: one object per member, [`Member::json`] then its `plan` as `diff -o json` prints it with
/// `context` lines around changes (`None`: whole objects), or its `error`.
pub fn json<M: Member>(members: &[M], context: Option<usize>) -> String {
    let items: Vec<Value> = members
        .iter()
        .map(|m| {
            let mut item = m.json();
            if let (true, Ok(plan)) = (M::WORDS.attention, m.outcome()) {
                let a = attention::of(plan);
                item.insert("images".into(), serde_json::to_value(&a.images).unwrap_or(Value::Null));
                item.insert("risks".into(), serde_json::to_value(&a.risks).unwrap_or(Value::Null));
            }
            let (key, value) = match m.outcome() {
                Ok(plan) => ("plan", serde_json::from_str(&plan.render_json(context)).unwrap_or(Value::Null)),
                Err(error) => ("error", Value::from(error.as_str())),
            };
            item.insert(key.into(), value);
            Value::Object(item)
        })
        .collect();
    format!("{}\n", serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".into()))
}

/// `-o markdown` within `limit` bytes, after `head` (the comment so far, counted in the limit): the
/// table, then each changed member's section in the table's order; the first is cut to fit, later ones
/// go whole or not at all, and those left out are counted in a closing line.
pub fn markdown<M: Member>(head: String, members: &[M], context: Option<usize>, limit: usize) -> String {
    let words = &M::WORDS;
    let mut out = head;
    out.push_str(words.markdown_header);
    for m in members {
        let [first, second] = m.markdown_who();
        let [add, change, remove] = counts(m.outcome());
        let note = note(m).replace('|', "\\|");
        let cell =
            if m.outcome().is_ok() && note.is_empty() { words.markdown_blank.into() } else { format!(" {note} ") };
        out.push_str(&format!("| {first} | {second} | {add} | {change} | {remove} |{cell}|\n"));
    }
    if words.attention {
        out.push_str(&attention_markdown(members));
    }
    let budget = limit.saturating_sub(NOTE_ROOM);
    let sections: Vec<(&M, &Plan)> = changed(members).collect();
    let mut shown = 0;
    for (m, plan) in &sections {
        let room = budget.saturating_sub(out.len());
        // The first section is cut to fit rather than left out; later ones go whole or not at all.
        let section = if shown == 0 {
            m.markdown_section(plan, context, room)
        } else {
            let whole = m.markdown_section(plan, context, usize::MAX);
            if whole.len() > room {
                break;
            }
            whole
        };
        out.push_str(&section);
        shown += 1;
    }
    let left = sections.len() - shown;
    if left > 0 {
        out.push_str(&format!(
            "\n**{left} more release{} not shown** to keep this comment under {COMMENT_LIMIT} characters: `{} {}` prints them all.\n",
            if left == 1 { "" } else { "s" },
            crate::support::output::chart_command(),
            words.command,
        ));
    }
    out
}
