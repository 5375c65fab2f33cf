//! Text drawings of the core's trace for the terminal.
//!
//! Everything drawn here comes from the trace; nothing is computed about the model. Events
//! are printed generically from their serialized form, so a new mechanism's events need no
//! code here, and the state drawing covers every mechanism's queues, pages and cursors.

use skblab_core::events::EventKind;
use skblab_core::question::{Kind, Question};
use skblab_core::quiz::Item;
use skblab_core::skb::Skb;
use skblab_core::trace::{Counters, Cursor, Event, State, Trace};
use skblab_core::walkthrough::{self, Moment, Walkthrough};
use std::fmt::Write;

/// Width of a proportional bar, in characters.
const BAR: u32 = 32;
/// Paragraph width for narration.
const WRAP: usize = 88;

/// How text is drawn: ANSI colour when the terminal supports it, plain text otherwise; and
/// every event, or long event lists cut in the middle (`--all-events`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
    pub all_events: bool,
}

impl Style {
    pub const PLAIN: Style = Style {
        color: false,
        all_events: false,
    };

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    fn head(&self, s: &str) -> String {
        self.paint("1;36", s)
    }
    fn linear(&self, s: &str) -> String {
        self.paint("33", s)
    }
    fn frag(&self, s: &str) -> String {
        self.paint("32", s)
    }
    fn warn(&self, s: &str) -> String {
        self.paint("1;31", s)
    }
}

/// A walkthrough step with more events than this shows the first and last few, and its key
/// moments, and counts the rest (the narration carries the story).
const EVENTS_SHOWN: usize = 16;
/// The same for `run`, which is the full log but must stay readable when one op with a
/// `count` makes thousands of events.
const EVENTS_LOGGED: usize = 200;

/// The events of one step, one per line, each with the kernel function it stands for when
/// `kernel` (the trace) is given. A list longer than `shown` (unless `st.all_events`) keeps its first
/// and last few and every event of a `key` kind; each run of events left out between them is
/// a line counting it, by kind (the JSON trace has every event).
fn events(
    out: &mut String,
    list: &[Event],
    shown: usize,
    key: &[EventKind],
    kernel: Option<&Trace>,
    st: Style,
) {
    let (head, tail) = (shown * 3 / 4, shown / 4);
    let cut = list.len() > shown && !st.all_events;
    let kept =
        |i: usize, e: &Event| !cut || i < head || i >= list.len() - tail || key.contains(&e.kind());
    let mut left_out: Vec<&Event> = Vec::new();
    for (i, e) in list.iter().enumerate() {
        if !kept(i, e) {
            left_out.push(e);
            continue;
        }
        tally(out, &left_out, st);
        left_out.clear();
        let f = kernel.and_then(|t| t.kernel_fn(e));
        let f = f.map(|f| st.dim(&format!("  ({})", f.label())));
        let _ = writeln!(out, "  {} {}{}", st.dim("·"), e, f.unwrap_or_default());
    }
    tally(out, &left_out, st);
}

/// One line for events left out: how many, by kind in order of appearance; none for none.
fn tally(out: &mut String, left_out: &[&Event], st: Style) {
    if left_out.is_empty() {
        return;
    }
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for e in left_out {
        let name = e.kind().name();
        match kinds.iter_mut().find(|(k, _)| *k == name) {
            Some((_, n)) => *n += 1,
            None => kinds.push((name, 1)),
        }
    }
    let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    let (n, kinds) = (left_out.len(), kinds.join(", "));
    let _ = writeln!(out, "  {} … {n} more: {kinds}", st.dim("·"));
}

/// A proportional bar of `n` of `total` using `fill`, padded with dots.
fn bar(n: u32, total: u32, fill: char) -> String {
    let w = if total == 0 {
        0
    } else {
        ((n as u64 * BAR as u64).div_ceil(total as u64)) as usize
    };
    let w = w.min(BAR as usize);
    format!(
        "{}{}",
        fill.to_string().repeat(w),
        "·".repeat(BAR as usize - w)
    )
}

fn skb(out: &mut String, s: &Skb, st: Style) {
    let mut flags = Vec::new();
    for (on, name) in [(s.psh, "PSH"), (s.eor, "EOR"), (s.sent, "sent")] {
        if on {
            flags.push(name);
        }
    }
    let _ = writeln!(
        out,
        "  {} seq {}..{}  len {} = linear {} + {}  truesize {}{}{}",
        st.bold(&format!("skb#{}", s.id)),
        s.seq,
        s.end_seq,
        s.len,
        st.linear(&s.linear_len.to_string()),
        st.frag(&data_len(s)),
        s.head.truesize,
        if flags.is_empty() {
            String::new()
        } else {
            format!("  [{}]", flags.join(" "))
        },
        if s.cpu != 0 {
            format!("  cpu{}", s.cpu)
        } else {
            String::new()
        },
    );
    let _ = writeln!(
        out,
        "      head {} B: headroom {} | {} | tailroom {}",
        s.head.head_bytes,
        s.head.headroom,
        st.linear(&format!("linear {}", s.linear_len)),
        s.head.tailroom,
    );
    if let Some(f) = &s.head_frag {
        let _ = writeln!(
            out,
            "      head in page {} @{} +{}",
            f.page, f.offset, f.size
        );
    }
    for (i, f) in s.frags.iter().enumerate() {
        let _ = writeln!(
            out,
            "      {}",
            st.frag(&format!(
                "frag[{i}] -> page {} @{} +{}",
                f.page, f.offset, f.size
            ))
        );
    }
    for inner in &s.frag_list {
        let _ = writeln!(
            out,
            "      frag_list -> skb#{} seq {}..{} len {} ({} frags)",
            inner.id,
            inner.seq,
            inner.end_seq,
            inner.len,
            inner.frags.len()
        );
    }
    if let Some(m) = &s.mapping {
        let _ = writeln!(
            out,
            "      DSS map data_seq {} subflow_seq {} data_len {}{}",
            m.data_seq,
            m.subflow_seq,
            m.data_len,
            if m.frozen { " (frozen)" } else { "" }
        );
    }
}

/// "frags N", or, when GRO chained skbs on the frag_list, how data_len splits between them.
fn data_len(s: &Skb) -> String {
    if s.frag_list.is_empty() {
        return format!("frags {}", s.data_len);
    }
    let chained = s.frag_list_len();
    format!("frags {} + frag_list {chained}", s.data_len - chained)
}

fn cursor(c: &Cursor) -> String {
    let bias = c
        .bias
        .map(|b| format!("  pagecnt_bias {b}"))
        .unwrap_or_default();
    match c.page {
        Some(p) => format!(
            "  {} -> page {p} offset {}/{}{bias}",
            c.name, c.offset, c.size
        ),
        None => format!("  {} -> no page", c.name),
    }
}

/// The whole state: queues with their skbs, live pages with fullness and count, cursors.
pub fn state(s: &State, st: Style) -> String {
    let mut out = String::new();
    for q in &s.queues {
        let _ = writeln!(
            out,
            "{} ({} skb{})",
            st.head(&q.name),
            q.skbs.len(),
            if q.skbs.len() == 1 { "" } else { "s" }
        );
        for b in &q.skbs {
            skb(&mut out, b, st);
        }
    }
    if !s.pages.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            st.head(&format!("pages ({} live)", s.pages.len()))
        );
    }
    for p in &s.pages {
        let _ = writeln!(
            out,
            "  page {:<4} order {} {} {:>6}/{:<6} count {}  cpu{}",
            p.id,
            p.order,
            st.frag(&bar(p.used, p.size, '█')),
            p.used,
            p.size,
            st.bold(&p.count.to_string()),
            p.cpu
        );
    }
    if !s.dfrags.is_empty() {
        let _ = writeln!(out, "{}", st.head(&format!("dfrags ({})", s.dfrags.len())));
    }
    for d in &s.dfrags {
        let _ = writeln!(
            out,
            "  data_seq {} -> page {} @{} +{}  sent {}",
            d.data_seq, d.page, d.offset, d.data_len, d.already_sent
        );
    }
    if !s.cursors.is_empty() {
        let _ = writeln!(out, "{}", st.head("page-frag cursors"));
    }
    for c in &s.cursors {
        let _ = writeln!(out, "{}", cursor(c));
    }
    out
}

/// What step `i` of `t` freed, where and by which kernel function (the state after it holds
/// only what is live).
fn freed(out: &mut String, t: &Trace, i: usize, st: Style) {
    let freed = t.freed(i, usize::MAX);
    if !freed.is_empty() {
        let _ = writeln!(out, "{}", st.head("freed in this step"));
    }
    for f in freed {
        let _ = writeln!(out, "  {f}");
    }
}

/// Counters that changed in this step, with their change.
fn changed(prev: Option<&Counters>, now: &Counters) -> Vec<String> {
    now.0
        .iter()
        .filter_map(|(name, v)| {
            let before = prev.and_then(|p| p.get(name)).unwrap_or(0);
            (*v != before).then(|| format!("{name} {v} ({:+})", *v as i64 - before as i64))
        })
        .collect()
}

/// Step `i` of `t`: events, state, what it freed, counters that moved.
pub fn step(t: &Trace, i: usize, st: Style) -> String {
    let (n, s, prev) = (
        t.steps.len(),
        &t.steps[i],
        i.checked_sub(1).map(|j| &t.steps[j]),
    );
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        st.bold(&format!("── step {}/{n}: {} ──", i + 1, s.op))
    );
    events(&mut out, &s.events, EVENTS_LOGGED, &[], Some(t), st);
    out.push_str(&state(&s.state, st));
    freed(&mut out, t, i, st);
    let moved = changed(prev.map(|p| &p.counters), &s.counters);
    if !moved.is_empty() {
        let _ = writeln!(out, "{} {}", st.head("counters:"), moved.join(", "));
    }
    out
}

/// A whole trace, step by step, then the final counters.
pub fn trace(t: &Trace, st: Style) -> String {
    let mut out = format!(
        "{} variant {} ({} constants)\n\n",
        st.bold(&format!("mechanism {}", t.mechanism)),
        st.bold(&t.variant),
        t.era
    );
    for i in 0..t.steps.len() {
        out.push_str(&step(t, i, st));
        out.push('\n');
    }
    out.push_str(&st.head("final counters\n"));
    for (name, v) in &t.counters.0 {
        let _ = writeln!(out, "  {name:<28} {v:>12}");
    }
    out
}

/// Counters of two runs side by side with the difference.
pub fn compare(a: &Trace, b: &Trace, st: Style) -> String {
    let mut out = format!(
        "{:<28} {:>14} {:>14} {:>14}\n",
        "counter", a.variant, b.variant, "difference"
    );
    let names: Vec<&str> = a
        .counters
        .names()
        .chain(b.counters.names().filter(|n| a.counters.get(n).is_none()))
        .collect();
    for name in names {
        let (x, y) = (a.counters.get(name), b.counters.get(name));
        let diff = match (x, y) {
            (Some(x), Some(y)) if x == y => "=".to_string(),
            (Some(x), Some(y)) => st.warn(&format!("{:+}", y as i64 - x as i64)),
            _ => "n/a".to_string(),
        };
        let show = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        let _ = writeln!(
            out,
            "{name:<28} {:>14} {:>14} {:>14}",
            show(x),
            show(y),
            diff
        );
    }
    out
}

/// Wraps a text at [`WRAP`] columns, a blank line between its paragraphs
/// ([`walkthrough::paragraphs`]).
pub fn wrap(text: &str, indent: &str) -> String {
    let mut out = String::new();
    for para in walkthrough::paragraphs(text) {
        let mut line = String::from(indent);
        for word in para.split_whitespace() {
            if line.len() > indent.len() && line.len() + 1 + word.len() > WRAP {
                out.push_str(line.trim_end());
                out.push('\n');
                line = String::from(indent);
            }
            if line.len() > indent.len() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(line.trim_end());
        out.push_str("\n\n");
    }
    out.pop();
    out
}

/// A narrated walkthrough: intro, each step's questions (asked, not answered), its paragraph
/// then each variant's state, then the answers under their own heading, so a reader can
/// predict before seeing them; the comparison of the final counters, and the outro. `traces`
/// are the walkthrough's variants in order, `questions` its [`Walkthrough::questions`].
pub fn walkthrough(w: &Walkthrough, questions: &[Question], traces: &[Trace], st: Style) -> String {
    let mut out = walkthrough_intro(w, st);
    for i in 0..w.say.len() {
        let asked: Vec<&Question> = questions.iter().filter(|q| q.step == i + 1).collect();
        for q in &asked {
            out.push_str(&question(q, st));
            out.push('\n');
        }
        out.push_str(&walkthrough_step(w, traces, i, st));
        if !asked.is_empty() {
            let _ = writeln!(out, "{}", st.bold(&format!("Answers to step {}:", i + 1)));
            for q in &asked {
                let answer = w.answer(q, traces).map_or_else(|e| e, |a| q.say(a));
                out.push_str(&wrap(&format!("[{}] {}", q.variant, q.ask), "  "));
                let _ = writeln!(out, "    answer: {answer}");
            }
            out.push('\n');
        }
    }
    out.push_str(&walkthrough_outro(traces, w, st));
    out
}

/// A title, underlined.
pub fn title(text: &str, st: Style) -> String {
    format!("{}\n{}\n", st.bold(text), "=".repeat(text.chars().count()))
}

/// The title, the patches cited, what the running kernel judged, and the intro.
pub fn walkthrough_intro(w: &Walkthrough, st: Style) -> String {
    let mut out = title(&w.title, st);
    for p in w.patches() {
        let _ = writeln!(out, "{}", st.dim(&format!("Patch: {}", p.cite())));
    }
    if let Some(k) = &w.kernel {
        for line in wrap(k, "").lines() {
            let _ = writeln!(out, "{}", st.dim(line));
        }
    }
    out.push('\n');
    out.push_str(&wrap(&w.intro, ""));
    out.push('\n');
    out
}

/// Step `i`: its paragraph, then each variant's events, state and counters that moved.
pub fn walkthrough_step(w: &Walkthrough, traces: &[Trace], i: usize, st: Style) -> String {
    let mut out = String::new();
    let op = traces.first().map(|t| t.steps[i].op.as_str()).unwrap_or("");
    let _ = writeln!(
        out,
        "{}",
        st.bold(&format!("━━ Step {}/{}: {op} ━━", i + 1, w.say.len()))
    );
    out.push_str(&wrap(&w.say[i], ""));
    out.push('\n');
    for m in w
        .moments()
        .unwrap_or_default()
        .iter()
        .filter(|m| m.step == i + 1)
    {
        let _ = writeln!(out, "{}", st.bold(&moment(m, &w.variants, traces)));
    }
    let key = w.key_kinds();
    for t in traces {
        let prev = i.checked_sub(1).map(|j| &t.steps[j]);
        let s = &t.steps[i];
        let _ = writeln!(out, "{}", st.head(&format!("[{}]", t.variant)));
        events(&mut out, &s.events, EVENTS_SHOWN, &key, Some(t), st);
        out.push_str(&state(&s.state, st));
        freed(&mut out, t, i, st);
        let moved = changed(prev.map(|p| &p.counters), &s.counters);
        if !moved.is_empty() {
            let _ = writeln!(out, "counters: {}", moved.join(", "));
        }
        out.push('\n');
    }
    out
}

/// A lesson's key moment, where each variant makes it: `Key moment: new_frag: event 3 in
/// kumar-2010; none in pre-2010`.
fn moment(m: &Moment, variants: &[String], traces: &[Trace]) -> String {
    let places: Vec<String> = (variants.iter().zip(traces))
        .map(|(v, t)| match m.events(t)[..] {
            [] => format!("none in {v}"),
            [k] => format!("event {k} in {v}"),
            [k, ref more @ ..] => format!("{} events from event {k} in {v}", more.len() + 1),
        })
        .collect();
    format!("Key moment: {}: {}", m.kind, places.join("; "))
}

/// The final counters side by side (two variants), then the outro.
pub fn walkthrough_outro(traces: &[Trace], w: &Walkthrough, st: Style) -> String {
    let mut out = String::new();
    if let [a, b] = traces {
        let _ = writeln!(out, "{}", st.bold("━━ Before and after ━━"));
        out.push_str(&compare(a, b, st));
        out.push('\n');
    }
    out.push_str(&wrap(&w.outro, ""));
    out
}

/// A question as it is asked, before its step: the variant, the question, the choices.
pub fn question(q: &Question, st: Style) -> String {
    let how = match q.kind() {
        Kind::Number => "a number",
        Kind::Choice => "a letter",
        Kind::Pick => "an object: skb N, page N or skb N frag I",
    };
    let head = format!("? Predict [{}]:", q.variant);
    let text = wrap(&format!("{head} {}", q.ask), "");
    let mut out = text.replacen(&head, &st.bold(&head), 1);
    for o in q.options() {
        let _ = writeln!(out, "    {o}");
    }
    let _ = writeln!(out, "  {}", st.dim(&format!("(answer with {how})")));
    out
}

/// A question judged: right or wrong, the answer, and how it is made up (the core's
/// [`Item::why`], read from `traces`, the quiz's).
pub fn revealed(item: &Item, traces: &[Trace], right: bool, st: Style) -> String {
    let mut out = if right {
        format!("  right: {}\n", item.said())
    } else {
        format!("  wrong: the answer is {}\n", item.said())
    };
    if let Some(why) = item.why(traces) {
        let _ = writeln!(out, "{}", st.dim(&wrap(&format!("({why})"), "  ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_event_lists_keep_both_ends_and_tally_the_middle() {
        let mut list: Vec<Event> = (0..240)
            .map(|page| Event::ReusePage {
                page,
                cursor: None,
                bias: None,
            })
            .collect();
        list.extend((0..10).map(|page| Event::GetPage { page, count: 2 }));
        let mut out = String::new();
        events(&mut out, &list, EVENTS_LOGGED, &[], None, Style::PLAIN);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 150 + 1 + 50);
        assert_eq!(lines[149], "  · reuse_page page=149");
        assert_eq!(lines[150], "  · … 50 more: reuse_page ×50");
        assert_eq!(lines[151], "  · reuse_page page=200");
        assert_eq!(lines[200], "  · get_page page=9 count=2");
    }

    /// `run` names each event's kernel function, as a walkthrough does.
    #[test]
    fn a_run_names_each_event_s_kernel_function() {
        let text = include_str!("../../scenarios/sendmsg-nosg.toml");
        let s = skblab_core::Scenario::parse(text).expect("the scenario parses");
        let t = s.run(&Default::default()).expect("it runs");
        let out = trace(&t, Style::PLAIN);
        let events: Vec<&str> = (out.lines())
            .filter(|l| l.starts_with("  · ") && !l.contains(" … "))
            .collect();
        assert!(events.len() > 10, "{out}");
        for l in events {
            assert!(l.ends_with(')') && l.contains("  ("), "{l}");
        }
        assert!(out.contains("(sk_stream_alloc_skb)"), "{out}");
    }

    /// A key moment in the middle of a long list is printed where it is, between the tallies
    /// of what is left out around it; `--all-events` leaves nothing out.
    #[test]
    fn a_key_moment_is_never_left_out() {
        let mut list: Vec<Event> = (0..40)
            .map(|page| Event::GetPage { page, count: 2 })
            .collect();
        list[20] = Event::RxCacheTake { skb: 7, cpu: 0 };
        let take = [EventKind::RxCacheTake];
        let mut out = String::new();
        events(&mut out, &list, EVENTS_SHOWN, &take, None, Style::PLAIN);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 12 + 1 + 1 + 1 + 4, "{out}");
        assert_eq!(lines[12], "  · … 8 more: get_page ×8");
        assert_eq!(lines[13], "  · rx_cache_take skb=7 cpu=0");
        assert_eq!(lines[14], "  · … 15 more: get_page ×15");
        let all = Style {
            all_events: true,
            ..Style::PLAIN
        };
        let mut out = String::new();
        events(&mut out, &list, EVENTS_SHOWN, &[], None, all);
        assert_eq!(out.lines().count(), 40);
        assert!(!out.contains("more:"), "{out}");
    }
}
