//! A piece of the view that is built and compared again only when its props change.
//!
//! Every message renders the app again, and Yew builds and compares every node of a view
//! function's result: a step rebuilt the picker, the chart's plot and the lane whose events
//! did not move, an event the counters too. A piece's props are what it reads, compared
//! cheaply (a session by identity, positions, flags), so Yew skips the pieces whose props
//! are equal. One component serves every piece (each Yew component costs the bundle about
//! 0.6 KiB gzip): it holds the props behind `dyn`, and compares them only with props of the
//! same type.

use std::any::Any;
use std::rc::Rc;
use yew::prelude::*;

/// Props that draw a piece of the view.
pub trait View: PartialEq + 'static {
    fn view(&self) -> Html;
}

/// The piece drawn by `props`; Yew draws it again only when they differ from the last.
pub fn pure<P: View>(props: P) -> Html {
    let part: Rc<dyn Part> = Rc::new(props);
    html! { <Pure {part} /> }
}

/// A [`View`] of any type, comparable with another.
trait Part {
    fn same(&self, other: &dyn Any) -> bool;
    fn draw(&self) -> Html;
    fn any(&self) -> &dyn Any;
}

impl<P: View> Part for P {
    fn same(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<P>() == Some(self)
    }
    fn draw(&self) -> Html {
        self.view()
    }
    fn any(&self) -> &dyn Any {
        self
    }
}

#[derive(Properties)]
struct Props {
    part: Rc<dyn Part>,
}

impl PartialEq for Props {
    fn eq(&self, other: &Props) -> bool {
        self.part.same(other.part.any())
    }
}

struct Pure;

impl Component for Pure {
    type Message = ();
    type Properties = Props;

    fn create(_: &Context<Self>) -> Self {
        Pure
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        ctx.props().part.draw()
    }
}
