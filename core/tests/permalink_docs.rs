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
        .filter(|s| s.starts_with("#w=") || s.starts_with("#s="))
        .collect();
    assert_eq!(links.len(), 3, "{links:?}");
    let at = |step, event| Position { step, event };
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
    let Link::Custom {
        text,
        compare,
        at: pos,
    } = &decoded[2]
    else {
        panic!("{:?}", decoded[2]);
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
