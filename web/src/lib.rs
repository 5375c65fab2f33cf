//! skblab playground: the core's traces drawn in the browser.
//!
//! The core does all the modelling; this crate chooses what to run ([`session`]), keeps
//! where the learner stands in it and the moves that change it ([`navigation`]), draws a
//! state ([`diagram`], [`chart`]), marks what changed ([`diff`]) and wires it into a Yew app
//! ([`app`]); [`beside`] sets the model's prediction beside a capture; [`predict`] holds predict mode's questions and the learner's record. Everything but `app` and `dom` is plain Rust, tested natively.

pub mod beside;
pub mod chart;
pub mod diagram;
pub mod diff;
pub mod form;
pub mod lesson;
pub mod navigation;
pub mod predict;
pub mod session;

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod dom;

/// Entry point, called by the generated JS module.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        dom::show_panic(&format!(
            "The playground hit an internal error and stopped: {info}. \
             Reload the page; please report the scenario that caused it."
        ));
    }));
    let doc = dom::document();
    // The page's "About" line names the build it runs.
    if let Some(v) = doc.get_element_by_id("version") {
        v.set_text_content(Some(env!("CARGO_PKG_VERSION")));
    }
    let root = (doc.get_element_by_id("app")).expect("index.html has <div id=\"app\">");
    yew::Renderer::<app::App>::with_root(root).render();
}
