//! Every link docs/permalink.md shows decodes to what the page says it means.

use skblab_core::permalink::{Link, Position};
use skblab_core::{walkthrough, Scenario};

#[test]
fn the_documented_links_decode_as_documented() {
    let path = format!("{}/../docs/permalink.md", env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(&path).expect("docs/permalink.md");
    let links: Vec<&str> = doc
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| ["#w=", "#s=", "#c="].iter().any(|k| s.starts_with(k)))
        .collect();
    assert_eq!(links.len(), 6, "{links:?}");
    let at = |step, event: Option<usize>| Position {
        step,
        lead: event.map(|_| 0),
        events: [event, None],
    };
    let decoded: Vec<Link> = links
        .iter()
        .map(|l| Link::decode(l).expect("decodes").expect("a link"))
        .collect();
    let anatomy = |event| Link::Walk {
        name: "anatomy".into(),
        at: at(3, event),
    };
    assert_eq!(decoded[0], anatomy(None));
    assert_eq!(decoded[1], anatomy(Some(2)));
    walkthrough::find("anatomy").expect("a built-in walkthrough");
    let both = Position {
        step: 2,
        lead: Some(1),
        events: [Some(4), Some(4)],
    };
    assert_eq!(
        decoded[2],
        Link::Walk {
            name: "rx-page-reuse".into(),
            at: both
        }
    );
    assert_eq!(
        decoded[3],
        Link::Challenge {
            name: "reuse-a-page".into(),
            work: None,
            at: Position::default()
        }
    );
    let c = skblab_core::challenge::find("reuse-a-page").expect("a built-in challenge");
    // Homework: the challenge with a learner's scenario, which meets the goal.
    let Link::Challenge {
        name,
        work: Some(work),
        ..
    } = &decoded[4]
    else {
        panic!("{:?}", decoded[4]);
    };
    assert_eq!(name, "reuse-a-page");
    assert!(work.contains("nic = { budget = 2 }"), "{work}");
    assert!(c.check(work).expect("it runs").solved_at.is_some());
    let Link::Custom {
        text,
        compare,
        at: pos,
    } = &decoded[5]
    else {
        panic!("{:?}", decoded[5]);
    };
    assert_eq!(
        text,
        "mechanism = \"sendmsg\"\nops = [{ op = \"sendmsg\", bytes = 4096 }]\n"
    );
    assert_eq!(compare.as_deref(), Some("kumar-2010"));
    assert_eq!(*pos, at(1, None));
    Scenario::parse(text).expect("the scenario parses");
    for (l, link) in links.iter().zip(&decoded) {
        assert_eq!(format!("#{}", link.encode()), *l, "encodes back");
    }
}
