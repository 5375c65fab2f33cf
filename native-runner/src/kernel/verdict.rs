//! The comparison: the model's skbs beside the kernel's, field by field, with a verdict for
//! each. Pure data in, rows out, so it is tested without root or a kernel.

use serde::Serialize;

/// One skb as both sides describe it. `truesize` is shown, not judged: the model's head is
/// sized for a kernel config other than this machine's (docs/kernel-oracle.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SkbView {
    /// skb->len.
    pub len: u64,
    /// skb_headlen(skb) = len - data_len.
    pub linear: u64,
    /// skb_shinfo(skb)->nr_frags.
    pub nr_frags: u64,
    /// skb->truesize.
    pub truesize: u64,
}

/// What one side built: its size goal(s) and its write queue, oldest skb first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Side {
    /// Every size_goal the side used, in order of first use (the model has one).
    pub size_goals: Vec<u64>,
    pub skbs: Vec<SkbView>,
}

/// One judged field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Row {
    /// `size_goal`, `skbs`, or `skb[i].len` / `.linear` / `.nr_frags`.
    pub field: String,
    pub model: Option<u64>,
    pub kernel: Option<u64>,
    pub agree: bool,
}

impl Row {
    fn new(field: String, model: Option<u64>, kernel: Option<u64>) -> Row {
        Row {
            field,
            agree: model == kernel,
            model,
            kernel,
        }
    }
}

/// Reads one field of an skb.
type Field = fn(&SkbView) -> u64;

/// The judged fields of one skb, in the order the table shows them.
const JUDGED: [(&str, Field); 3] = [
    ("len", |s| s.len),
    ("linear", |s| s.linear),
    ("nr_frags", |s| s.nr_frags),
];

/// Sets the two sides beside each other: every size goal the kernel used against the
/// model's, the number of skbs, then each skb's judged fields (a missing skb is a
/// disagreement in every field).
pub fn compare(model: &Side, kernel: &Side) -> Vec<Row> {
    let goal = model.size_goals.first().copied();
    let mut rows: Vec<Row> = if kernel.size_goals.is_empty() {
        vec![Row::new("size_goal".into(), goal, None)]
    } else {
        kernel
            .size_goals
            .iter()
            .map(|&k| Row::new("size_goal".into(), goal, Some(k)))
            .collect()
    };
    rows.push(Row::new(
        "skbs".into(),
        Some(model.skbs.len() as u64),
        Some(kernel.skbs.len() as u64),
    ));
    for i in 0..model.skbs.len().max(kernel.skbs.len()) {
        let (m, k) = (model.skbs.get(i), kernel.skbs.get(i));
        for (name, get) in JUDGED {
            rows.push(Row::new(format!("skb[{i}].{name}"), m.map(get), k.map(get)));
        }
    }
    rows
}

/// "agree" when every row agrees, else "differ".
pub fn verdict(rows: &[Row]) -> &'static str {
    if rows.iter().all(|r| r.agree) {
        "agree"
    } else {
        "differ"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skb(len: u64, nr_frags: u64) -> SkbView {
        SkbView {
            len,
            linear: 0,
            nr_frags,
            truesize: 0,
        }
    }

    fn side(goals: &[u64], skbs: &[SkbView]) -> Side {
        Side {
            size_goals: goals.to_vec(),
            skbs: skbs.to_vec(),
        }
    }

    #[test]
    fn equal_sides_agree_and_truesize_is_not_judged() {
        let m = side(&[65160], &[skb(65160, 2), skb(100, 1)]);
        let mut k = m.clone();
        k.skbs[0].truesize = 12345;
        let rows = compare(&m, &k);
        // size_goal, skbs, then three fields for each of the two skbs.
        assert_eq!(rows.len(), 2 + 2 * 3);
        assert_eq!(verdict(&rows), "agree");
    }

    #[test]
    fn one_field_off_differs_and_names_the_field() {
        let m = side(&[65160], &[skb(65160, 2)]);
        let k = side(&[65160], &[skb(65160, 3)]);
        let rows = compare(&m, &k);
        assert_eq!(verdict(&rows), "differ");
        let bad: Vec<&str> = rows
            .iter()
            .filter(|r| !r.agree)
            .map(|r| r.field.as_str())
            .collect();
        assert_eq!(bad, ["skb[0].nr_frags"]);
    }

    #[test]
    fn a_missing_skb_differs_in_count_and_every_field() {
        let m = side(&[65160], &[skb(1, 1)]);
        let k = side(&[65160], &[skb(1, 1), skb(1, 1)]);
        let rows = compare(&m, &k);
        let bad: Vec<&str> = rows
            .iter()
            .filter(|r| !r.agree)
            .map(|r| r.field.as_str())
            .collect();
        assert_eq!(
            bad,
            ["skbs", "skb[1].len", "skb[1].linear", "skb[1].nr_frags"]
        );
    }

    #[test]
    fn every_kernel_size_goal_is_judged() {
        let m = side(&[65160], &[]);
        let k = side(&[65160, 31856], &[]);
        let rows = compare(&m, &k);
        assert_eq!(rows.iter().filter(|r| r.field == "size_goal").count(), 2);
        assert_eq!(verdict(&rows), "differ");
        assert_eq!(verdict(&compare(&m, &side(&[], &[]))), "differ");
    }
}
