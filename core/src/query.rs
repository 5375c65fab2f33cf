//! A small query language over one step of a trace: what a question asks and what a challenge's
//! goal tests. Queue and cursor names may hold spaces (`queue subflow 0 len`). A query is a few words (`counter pages_reused`, `page 0 count`,
//! `event free_skb cpu`); the core evaluates it, so an answer is always read from the trace and
//! a model fix can never leave a stale one.
//!
//! | query                          | value                                                   |
//! |--------------------------------|---------------------------------------------------------|
//! | `counter NAME`                 | the step's cumulative counter                           |
//! | `queue NAME len`               | skbs on the queue                                       |
//! | `queue NAME pages`             | distinct pages the queue's skbs hold (frags, head fragments, frag_list members) |
//! | `queue NAME first` / `last`    | the skb at the head / tail of the queue (an object)     |
//! | `pages live`                   | live pages                                              |
//! | `page ID count` / `used` / `cpu` | a live page's count (references), bytes handed out, home CPU |
//! | `skb ID FIELD`                 | `len linear_len data_len nr_frags truesize head_bytes cpu` |
//! | `event KIND FIELD`             | a field of the step's first KIND event; `skb`, `into` name an skb, `page` a page, `frag` the frag (`skb`, `idx`) |
//! | `events KIND`                  | how many KIND events the step has                       |
//! | `cursor NAME page` / `offset`  | a page-frag cursor's page (an object) or offset         |

use crate::events::Event;
use crate::page::PageId;
use crate::skb::{Skb, SkbId};
use crate::trace::{Counters, Queue, Step};
use serde::{Deserialize, Deserializer};
use std::fmt;
use std::str::FromStr;

/// What a query gives: a number, or an object the diagram draws (and a learner can click).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Number(u64),
    Skb(SkbId),
    Page(PageId),
    Frag { skb: SkbId, idx: u32 },
}

impl Value {
    /// Whether this names an object rather than a number.
    pub fn is_object(&self) -> bool {
        !matches!(self, Value::Number(_))
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Value::Number(n) => write!(f, "{n}"),
            Value::Skb(id) => write!(f, "skb {id}"),
            Value::Page(id) => write!(f, "page {id}"),
            Value::Frag { skb, idx } => write!(f, "skb {skb} frag {idx}"),
        }
    }
}

impl FromStr for Value {
    type Err = String;
    /// A learner's answer: `4`, `skb 3` (or `skb#3`), `page 1`, `skb 0 frag 1`.
    fn from_str(s: &str) -> Result<Value, String> {
        let spaced = s.trim().to_ascii_lowercase().replace('#', " ");
        let words: Vec<&str> = spaced.split_whitespace().collect();
        let num = |w: &str| {
            w.parse::<u32>()
                .map_err(|_| format!("`{w}` is not a number"))
        };
        match words[..] {
            [n] => n
                .parse()
                .map(Value::Number)
                .map_err(|_| format!("`{n}` is not a whole number")),
            ["skb", id] => Ok(Value::Skb(num(id)?)),
            ["page", id] => Ok(Value::Page(num(id)?)),
            ["skb", id, "frag", idx] => Ok(Value::Frag {
                skb: num(id)?,
                idx: num(idx)?,
            }),
            _ => Err(format!(
                "`{}`: expected a number, `skb N`, `page N` or `skb N frag I`",
                s.trim()
            )),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Query {
    Counter(String),
    QueueLen(String),
    QueuePages(String),
    QueueEnd { queue: String, last: bool },
    PagesLive,
    Page { id: PageId, field: PageField },
    Skb { id: SkbId, field: SkbField },
    Event { kind: String, field: String },
    Events(String),
    Cursor { name: String, page: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageField {
    Count,
    Used,
    Cpu,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkbField {
    Len,
    LinearLen,
    DataLen,
    NrFrags,
    Truesize,
    HeadBytes,
    Cpu,
}

const SKB_FIELDS: &str = "len, linear_len, data_len, nr_frags, truesize, head_bytes, cpu";

impl FromStr for Query {
    type Err = String;
    fn from_str(s: &str) -> Result<Query, String> {
        let words: Vec<&str> = s.split_whitespace().collect();
        let id = |w: &str| {
            w.parse::<u32>()
                .map_err(|_| format!("`{w}` is not an object id"))
        };
        Ok(match words[..] {
            ["counter", name] => Query::Counter(name.into()),
            ["queue", ref name @ .., field] if !name.is_empty() => {
                let q = name.join(" ");
                match field {
                    "len" => Query::QueueLen(q),
                    "pages" => Query::QueuePages(q),
                    "first" | "last" => Query::QueueEnd {
                        queue: q,
                        last: field == "last",
                    },
                    _ => {
                        return Err(format!(
                            "queue field `{field}`: expected len, pages, first or last"
                        ))
                    }
                }
            }
            ["pages", "live"] => Query::PagesLive,
            ["page", p, field] => Query::Page {
                id: id(p)?,
                field: match field {
                    "count" => PageField::Count,
                    "used" => PageField::Used,
                    "cpu" => PageField::Cpu,
                    _ => return Err(format!("page field `{field}`: expected count, used or cpu")),
                },
            },
            ["skb", b, field] => Query::Skb {
                id: id(b)?,
                field: match field {
                    "len" => SkbField::Len,
                    "linear_len" => SkbField::LinearLen,
                    "data_len" => SkbField::DataLen,
                    "nr_frags" => SkbField::NrFrags,
                    "truesize" => SkbField::Truesize,
                    "head_bytes" => SkbField::HeadBytes,
                    "cpu" => SkbField::Cpu,
                    _ => return Err(format!("skb field `{field}`: expected one of {SKB_FIELDS}")),
                },
            },
            ["event", kind, field] => Query::Event {
                kind: kind.into(),
                field: field.into(),
            },
            ["events", kind] => Query::Events(kind.into()),
            ["cursor", ref name @ .., f @ ("page" | "offset")] if !name.is_empty() => {
                Query::Cursor {
                    name: name.join(" "),
                    page: f == "page",
                }
            }
            _ => {
                return Err(format!(
                    "`{s}`: expected `counter NAME`, `queue NAME len|pages|first|last`, \
                     `pages live`, `page ID count|used|cpu`, `skb ID FIELD`, \
                     `event KIND FIELD`, `events KIND` or `cursor NAME page|offset`"
                ))
            }
        })
    }
}

impl<'de> Deserialize<'de> for Query {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Query, D::Error> {
        from_text(d)
    }
}

/// Reads a value written as text (a query, a condition) through its `FromStr`.
pub(crate) fn from_text<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr<Err = String>,
{
    String::deserialize(d)?
        .parse()
        .map_err(serde::de::Error::custom)
}

impl Query {
    /// Whether this query names an object (an skb, a frag or a page) rather than a number.
    pub fn names_object(&self) -> bool {
        match self {
            Query::QueueEnd { .. } => true,
            Query::Cursor { page, .. } => *page,
            Query::Event { field, .. } => object_field(field),
            _ => false,
        }
    }

    /// Whether it reads the step's own events (`events KIND`, `event KIND FIELD`), not a
    /// state or a counter the step carries on from the one before.
    pub fn reads_events(&self) -> bool {
        matches!(self, Query::Event { .. } | Query::Events(_))
    }

    /// Evaluates on `step`, or on the empty start before the first step (`None`: no queues,
    /// pages or events, every counter 0).
    pub fn eval(&self, step: Option<&Step>) -> Result<Value, String> {
        let Some(step) = step else {
            return self.eval_start();
        };
        let s = &step.state;
        let n = |v: u32| Ok(Value::Number(v.into()));
        match self {
            Query::Counter(name) => step
                .counters
                .get(name)
                .map(Value::Number)
                .ok_or_else(|| no_counter(&step.counters, name)),
            Query::QueueLen(q) => n(queue(&s.queues, q)?.skbs.len() as u32),
            Query::QueuePages(q) => n(distinct_pages(queue(&s.queues, q)?)),
            Query::QueueEnd { queue: q, last } => {
                let skbs = &queue(&s.queues, q)?.skbs;
                let end = if *last { skbs.back() } else { skbs.front() };
                end.map(|b| Value::Skb(b.id))
                    .ok_or(format!("queue `{q}` is empty"))
            }
            Query::PagesLive => n(s.pages.len() as u32),
            Query::Page { id, field } => {
                let p = s
                    .pages
                    .iter()
                    .find(|p| p.id == *id)
                    .ok_or(format!("page {id} is not live"))?;
                n(match field {
                    PageField::Count => p.count,
                    PageField::Used => p.used,
                    PageField::Cpu => p.cpu.into(),
                })
            }
            Query::Skb { id, field } => {
                let b = find_skb(s.queues.iter().flat_map(|q| &q.skbs), *id)
                    .ok_or(format!("skb {id} is on no queue"))?;
                n(skb_field(b, *field))
            }
            Query::Event { kind, field } => {
                let e = events_of(step, kind)
                    .next()
                    .ok_or(format!("the step has no `{kind}` event"))?;
                match serde_json::to_value(e) {
                    Ok(serde_json::Value::Object(e)) => event_field(&e, field),
                    _ => Err(format!("the `{kind}` event has no fields")),
                }
            }
            Query::Events(kind) => n(events_of(step, kind).count() as u32),
            Query::Cursor { name, page } => {
                let c = s
                    .cursors
                    .iter()
                    .find(|c| &c.name == name)
                    .ok_or(format!("no page-frag cursor `{name}`"))?;
                match (page, c.page) {
                    (true, Some(p)) => Ok(Value::Page(p)),
                    (true, None) => Err(format!("cursor `{name}` holds no page")),
                    (false, _) => n(c.offset),
                }
            }
        }
    }

    /// Before the first step nothing exists and every counter is 0.
    fn eval_start(&self) -> Result<Value, String> {
        match self {
            Query::Counter(_) | Query::PagesLive | Query::Events(_) => Ok(Value::Number(0)),
            _ => Err("nothing exists before the first step".into()),
        }
    }
}

/// That `counters` has no counter `name`, with the one it may have meant.
pub(crate) fn no_counter(counters: &Counters, name: &str) -> String {
    match crate::names::nearest(name, counters.names()) {
        Some(near) => format!("no counter `{name}`: did you mean `{near}`?"),
        None => format!("no counter `{name}`"),
    }
}

fn queue<'a>(queues: &'a [Queue], name: &str) -> Result<&'a Queue, String> {
    queues.iter().find(|q| q.name == name).ok_or_else(|| {
        let names: Vec<&str> = queues.iter().map(|q| q.name.as_str()).collect();
        format!("no queue `{name}`: the step has {}", names.join(", "))
    })
}

/// The skb `id`, at the top level or chained on a frag_list.
fn find_skb<'a>(mut skbs: impl Iterator<Item = &'a Skb>, id: SkbId) -> Option<&'a Skb> {
    skbs.find_map(|b| {
        if b.id == id {
            Some(b)
        } else {
            find_skb(b.frag_list.iter(), id)
        }
    })
}

/// The pages `q`'s frags are on, each counted once. Frags fill a page before the next, so a
/// frag's page is mostly the last one seen, and the list is searched only when it is not
/// (no set or sort: their code cost the playground's download 1 to 4 KB).
fn distinct_pages(q: &Queue) -> u32 {
    let mut seen: Vec<PageId> = Vec::new();
    let skbs = (q.skbs.iter()).flat_map(|b| std::iter::once(b).chain(&b.frag_list));
    for f in skbs.flat_map(|b| b.head_frag.iter().chain(&b.frags)) {
        if seen.last() != Some(&f.page) && !seen.contains(&f.page) {
            seen.push(f.page);
        }
    }
    seen.len() as u32
}

fn skb_field(b: &Skb, f: SkbField) -> u32 {
    match f {
        SkbField::Len => b.len,
        SkbField::LinearLen => b.linear_len,
        SkbField::DataLen => b.data_len,
        SkbField::NrFrags => b.nr_frags() as u32,
        SkbField::Truesize => b.head.truesize,
        SkbField::HeadBytes => b.head.head_bytes,
        SkbField::Cpu => b.cpu.into(),
    }
}

/// The step's events of `kind` (their trace tag, as the terminal prints them), told by
/// their kind: only an event a query reads is serialized.
fn events_of<'a>(step: &'a Step, kind: &'a str) -> impl Iterator<Item = &'a Event> + 'a {
    step.events.iter().filter(move |e| e.kind().name() == kind)
}

fn object_field(field: &str) -> bool {
    matches!(field, "skb" | "into" | "page" | "frag")
}

fn event_field(
    e: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Value, String> {
    let num = |k: &str| {
        e.get(k)
            .and_then(|v| v.as_u64().or(v.as_bool().map(u64::from)))
            .ok_or(format!("`{}` has no field `{k}`", e["ev"]))
    };
    let id = |k: &str| num(k).map(|v| v as u32);
    Ok(match field {
        "skb" | "into" => Value::Skb(id(field)?),
        "page" => Value::Page(id(field)?),
        "frag" => Value::Frag {
            skb: id("skb")?,
            idx: id("idx")?,
        },
        _ => Value::Number(num(field)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each page counted once, one its frags come back to included; a head fragment and a
    /// frag_list member's pages count too (a GRO packet holds pages through all three).
    #[test]
    fn a_queue_counts_each_page_of_its_frags_once() {
        let skb = |id, pages: &[PageId]| {
            let mut b = Skb::new(id, 0, crate::skb::SkbHead::default(), 0);
            for &page in pages {
                let f = crate::skb::Frag {
                    page,
                    offset: 0,
                    size: 1,
                };
                b.add_frag(f);
            }
            b
        };
        let q = Queue {
            name: "q".into(),
            skbs: [skb(0, &[3, 3, 5]), skb(1, &[5, 3, 7]), skb(2, &[])].into(),
        };
        assert_eq!(distinct_pages(&q), 3);
        let mut packet = skb(3, &[3]);
        packet.head_frag = Some(crate::skb::Frag {
            page: 8,
            offset: 0,
            size: 1,
        });
        packet.frag_list.push(skb(4, &[9]));
        let q = Queue {
            name: "q".into(),
            skbs: [packet].into(),
        };
        assert_eq!(distinct_pages(&q), 3);
    }

    #[test]
    fn answers_parse_as_learners_type_them() {
        let cases = [
            ("4", Value::Number(4)),
            (" skb#3 ", Value::Skb(3)),
            ("Page 1", Value::Page(1)),
            ("skb 0 frag 2", Value::Frag { skb: 0, idx: 2 }),
        ];
        for (text, v) in cases {
            assert_eq!(text.parse(), Ok(v), "{text}");
            assert_eq!(v.to_string().parse(), Ok(v));
        }
        for bad in ["", "four", "skb", "page x", "-1"] {
            assert!(bad.parse::<Value>().is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_queries_name_what_is_wrong() {
        let err = |q: &str| q.parse::<Query>().unwrap_err();
        assert!(err("skb 0 colour").contains("expected one of len"));
        assert!(err("page x count").contains("`x` is not an object id"));
        assert!(err("counter").contains("expected `counter NAME`"));
        assert_eq!(
            "event coalesce frag"
                .parse::<Query>()
                .map(|q| q.names_object()),
            Ok(true)
        );
    }
}
