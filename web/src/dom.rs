//! The little the app needs from the browser: the URL fragment, the tab's and the site's
//! storage, a form field's value and focus, scrolling into view, downloads, a clock for the
//! benchmark, the panic message, the text files served beside the page, and the text of a file
//! the learner opens.

use crate::lesson::FileKind;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

fn window() -> web_sys::Window {
    web_sys::window().expect("a browser window")
}

pub fn document() -> web_sys::Document {
    window().document().expect("a document")
}

/// The URL fragment, with its `#`.
pub fn fragment() -> String {
    window().location().hash().unwrap_or_default()
}

/// Whether mode `name` is on: the page's modes are bare words in the URL's query
/// (`?present&predict`), saying how the page shows where the fragment says what and where;
/// index.html turns them on and off.
pub fn mode(name: &str) -> bool {
    let q = window().location().search().unwrap_or_default();
    q.trim_start_matches('?').split('&').any(|w| w == name)
}

/// Replaces the fragment without adding a history entry or firing `hashchange`.
pub fn set_fragment(f: &str) {
    if let Ok(h) = window().history() {
        let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&format!("#{f}")));
    }
}

/// Where a value is kept: with the tab (across reloads, gone with it), or for the site
/// (across tabs and restarts).
#[derive(Clone, Copy)]
pub enum Kept {
    Tab,
    Site,
}

/// The storage for `kept`, where the page may use it (a private window or a policy may forbid
/// it).
fn storage(kept: Kept) -> Option<web_sys::Storage> {
    let w = window();
    match kept {
        Kept::Tab => w.session_storage(),
        Kept::Site => w.local_storage(),
    }
    .ok()
    .flatten()
}

/// The text stored under `key`, if any.
pub fn load(kept: Kept, key: &str) -> Option<String> {
    storage(kept)?.get_item(key).ok().flatten()
}

/// Stores `value` under `key`; without storage (or over its quota) it is not kept.
pub fn store(kept: Kept, key: &str, value: &str) {
    if let Some(s) = storage(kept) {
        let _ = s.set_item(key, value);
    }
}

/// The markup inside the element `id` of the page (empty if there is none).
pub fn inner_html(id: &str) -> String {
    let el = document().get_element_by_id(id);
    el.map(|e| e.inner_html()).unwrap_or_default()
}

/// The value of the form field with id `id` (an input or a select).
pub fn value_of(id: &str) -> Option<String> {
    let el = document().get_element_by_id(id)?;
    js_sys::Reflect::get(&el, &JsValue::from_str("value"))
        .ok()?
        .as_string()
}

/// Whether the checkbox with id `id` is ticked (none: not).
pub fn checked(id: &str) -> bool {
    let el = document().get_element_by_id(id);
    el.and_then(|el| js_sys::Reflect::get(&el, &JsValue::from_str("checked")).ok())
        .is_some_and(|v| v.is_truthy())
}

/// Moves the keyboard focus to the first element matching `selector`.
pub fn focus(selector: &str) {
    let el = document().query_selector(selector).ok().flatten();
    if let Some(el) = el.and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
        let _ = el.focus();
    }
}

#[wasm_bindgen::prelude::wasm_bindgen(inline_js = "export function reveal(pane, s) { \
    const p = document.querySelector(pane); if (!p) return; const b = p.getBoundingClientRect(); \
    const t = p.querySelector(':scope > .said'); \
    const under = t && getComputedStyle(t).position === 'sticky' ? t.getBoundingClientRect().bottom : 0; \
    for (const e of p.querySelectorAll(s)) { const r = e.getBoundingClientRect(); \
    if (r.top < under) p.scrollTop -= under - r.top; \
    else if (r.top < Math.max(b.top, 0) || r.bottom > Math.min(b.bottom, innerHeight)) \
    e.scrollIntoView({ block: 'nearest' }); } } \
    export function after_paint(name, idle) { const go = () => document.dispatchEvent(new Event(name)); \
    if (idle && window.requestIdleCallback) requestIdleCallback(go); \
    else requestAnimationFrame(() => setTimeout(go, 0)); } \
    export function seen(s) { const e = document.querySelector(s); if (!e) return 0; \
    const r = e.getBoundingClientRect(); \
    return Math.max(0, e.scrollTop + Math.min(r.bottom, innerHeight) - r.top); } \
    export function png(svg, name) { const i = new Image(); i.onload = () => { \
    const c = document.createElement('canvas'); c.width = 2 * i.width; c.height = 2 * i.height; \
    const g = c.getContext('2d'); g.scale(2, 2); g.drawImage(i, 0, 0); c.toBlob((b) => { \
    const a = document.createElement('a'); a.href = URL.createObjectURL(b); a.download = name; \
    a.click(); URL.revokeObjectURL(a.href); }, 'image/png'); }; \
    i.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(svg); } \
    export function publish(name, value) { (window.__skblab ??= {})[name] = value; } \
    export function svg_piece(html) { const g = document.createElementNS('http://www.w3.org/2000/svg', 'g'); \
    g.innerHTML = html; return g.firstChild; }")]
extern "C" {
    /// Scrolls each element matching `selector` in `pane` into view, as little as it takes
    /// (`block: "nearest"`; below the pane's sticky `.said`, the narration, when it is
    /// stuck), unless it is in view already: asking the browser to scroll
    /// costs a tenth of a millisecond even when nothing moves. In JS: the same in Rust,
    /// through `Reflect`, cost the wasm a third of a kilobyte.
    pub fn reveal(pane: &str, selector: &str);

    /// Sends the document an event `name` once the next frame is painted (a timeout from the
    /// frame's callback), or (`idle`) once the page is idle, after any input waiting.
    pub fn after_paint(name: &str, idle: bool);

    /// How far down the first element matching the selector its content is in view, in CSS
    /// pixels from its top: whether the element scrolls (a pane) or the page does.
    pub fn seen(selector: &str) -> f64;

    /// Offers `svg` drawn at twice its size (sharp on a slide) as a PNG file named `name`:
    /// the browser draws it on a canvas (in JS: the canvas and image bindings cost more).
    pub fn png(svg: &str, name: &str);

    /// Publishes a figure for the benchmark (`window.__skblab.NAME`). In JS: through
    /// `Reflect`, it cost the wasm about a hundred bytes.
    pub fn publish(name: &str, value: f64);

    /// The element of an SVG piece's markup (one element), parsed apart from the page, to be
    /// put in it later.
    pub fn svg_piece(html: &str) -> web_sys::Node;
}

/// The event [`after_paint`] sends when a render leaves work for the frame after.
pub const SETTLE: &str = "skblab-settle";
/// The event [`after_paint`] sends, when asked to, once the page is idle.
pub const IDLE: &str = "skblab-idle";

/// Milliseconds since the page started loading.
pub fn now() -> f64 {
    window().performance().map_or(0.0, |p| p.now())
}

/// Offers `content` as a file download.
pub fn download(filename: &str, mime: &str, content: &str) {
    let parts = js_sys::Array::of1(&JsValue::from_str(content));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    let doc = document();
    if let Ok(a) = doc.create_element("a") {
        let a: web_sys::HtmlAnchorElement = a.unchecked_into();
        a.set_href(&url);
        a.set_download(filename);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// Shows `message` in the page's panic banner (kept outside the Yew tree, which may be dead).
pub fn show_panic(message: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Some(el) = doc.get_element_by_id("panic") {
        el.set_text_content(Some(message));
        let _ = el.remove_attribute("hidden");
    }
}

/// Fetches `DIR/NAME.toml` beside the page for each name, all requests at once, the texts in
/// the order of `names`.
pub async fn fetch_texts(dir: &str, names: &[&str]) -> Result<Vec<String>, String> {
    let w = window();
    let pending: Vec<_> = names
        .iter()
        .map(|n| {
            let url = format!("{dir}/{n}.toml");
            let req = JsFuture::from(w.fetch_with_str(&url));
            (url, req)
        })
        .collect();
    let mut texts = Vec::with_capacity(names.len());
    for (url, req) in pending {
        let failed = |why: &str| format!("{url}: {why}");
        let resp: web_sys::Response = req.await.map_err(|_| failed("no answer"))?.unchecked_into();
        if !resp.ok() {
            return Err(failed(&format!("HTTP {}", resp.status())));
        }
        let body = resp.text().map_err(|_| failed("no body"))?;
        let text = JsFuture::from(body)
            .await
            .map_err(|_| failed("body cut off"))?;
        texts.push(text.as_string().unwrap_or_default());
    }
    Ok(texts)
}

/// The text of a file the learner chose, refused unread when larger than its kind's cap
/// ([`FileKind::cap`]), the kind told from its first bytes.
pub async fn read_text(f: &web_sys::File) -> Result<String, String> {
    let unread = |_| format!("{}: could not be read", f.name());
    let start = f.slice_with_f64_and_f64(0.0, 64.0).map_err(unread)?;
    let kind = FileKind::of(&text_of(&start).await.map_err(unread)?);
    kind.check_size(&f.name(), f.size())?;
    bytes_of(f).await.map_err(unread)
}

/// A blob's text as [`text_of`] reads it (a leading byte order mark dropped, bytes that are
/// not UTF-8 read as U+FFFD), read as bytes: a file of megabytes is copied into the wasm once,
/// not decoded into a JS string and encoded back.
async fn bytes_of(b: &web_sys::Blob) -> Result<String, JsValue> {
    let buf = JsFuture::from(b.array_buffer()).await?;
    let mut bytes = js_sys::Uint8Array::new(&buf).to_vec();
    if bytes.starts_with("\u{feff}".as_bytes()) {
        bytes.drain(..3);
    }
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// A blob's text (bytes that are not UTF-8 read as U+FFFD).
async fn text_of(b: &web_sys::Blob) -> Result<String, JsValue> {
    let text = JsFuture::from(b.text()).await?;
    Ok(text.as_string().unwrap_or_default())
}
