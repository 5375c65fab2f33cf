//! The two engines behind `--engine`: the core linked into this binary, or the same core
//! compiled to wasm (`wasm-module/`, ABI in `docs/wasm-abi.md`) and run under wasmtime.
//!
//! The wasm guest is untrusted in the sense that matters here: it runs with a fuel budget and a
//! memory limit, and every way it can fail (limits, traps, malformed replies) comes back as an
//! [`EngineError`] naming the cause, never as a crash of the runner.

use skblab_core::{RunOptions, Trace};
use skblab_wasm::{ErrorReply, Reply, Request};
use std::hash::{Hash, Hasher};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use wasmtime::{Instance, Memory, Module, ResourceLimiter, Store, StoreLimits, Trap};

/// Which build of the core runs a scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// The core compiled into this binary.
    #[default]
    Native,
    /// The core as a wasm module under wasmtime (must give byte-identical traces).
    Wasm,
}

/// Runs `scenario` text with `opts` on `engine`.
pub fn run(engine: Engine, scenario: &str, opts: &RunOptions) -> Result<Trace, EngineError> {
    match engine {
        Engine::Native => skblab_core::run_text(scenario, opts).map_err(|e| (&e).into()),
        Engine::Wasm => WasmHost::shared()?.run(scenario, opts),
    }
}

/// Runs an already parsed scenario (a walkthrough's): natively as is, in wasm through its JSON
/// form, which parses back to the same scenario.
pub fn run_scenario(
    engine: Engine,
    scenario: &skblab_core::Scenario,
    opts: &RunOptions,
) -> Result<Trace, EngineError> {
    match engine {
        Engine::Native => scenario.run(opts).map_err(|e| (&e).into()),
        Engine::Wasm => run(engine, &scenario.to_json(), opts),
    }
}

/// Like [`run`], but returns the trace exactly as serialized (`serde_json::to_string`): the
/// bytes the two engines must agree on.
pub fn run_json(engine: Engine, scenario: &str, opts: &RunOptions) -> Result<String, EngineError> {
    match engine {
        Engine::Native => run(engine, scenario, opts).and_then(|t| {
            serde_json::to_string(&t).map_err(|e| EngineError::BadReply(e.to_string()))
        }),
        Engine::Wasm => WasmHost::shared()?.run_json(scenario, opts),
    }
}

/// Everything that can go wrong running a scenario on either engine.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The scenario itself is wrong; both engines report it identically.
    #[error("{0}")]
    Scenario(ErrorReply),
    #[error(
        "the wasm module is not built (looked for {looked}); build it with \
         `{BUILD_COMMAND}`, or point SKBLAB_WASM at a skblab_wasm.wasm"
    )]
    ModuleMissing { looked: String },
    #[error("wasm module {path}: {message}")]
    Module { path: String, message: String },
    #[error(
        "the wasm guest ran out of fuel (limit {limit} units): the scenario runs too long \
         for the wasm engine's budget"
    )]
    OutOfFuel { limit: u64 },
    #[error(
        "the wasm guest hit its memory limit ({limit} bytes; it asked to grow to {requested} \
         bytes)"
    )]
    MemoryLimit { limit: usize, requested: usize },
    #[error("the wasm guest trapped: {0}")]
    Trap(String),
    #[error("the wasm guest sent a malformed reply: {0}")]
    BadReply(String),
}

impl From<&skblab_core::Error> for EngineError {
    fn from(e: &skblab_core::Error) -> Self {
        EngineError::Scenario(e.into())
    }
}

/// How to build the module the wasm engine loads (plain cargo: `cargo build --profile
/// wasm-engine --target wasm32-unknown-unknown -p skblab-wasm`).
pub const BUILD_COMMAND: &str = "cargo xtask build-wasm-module";
/// Where builds put it, relative to a cargo target directory: `wasm-engine` (the command
/// above and `cargo xtask test`) or `release` (plain cargo). The size-optimised
/// `wasm-release` is the browser's: its module runs the matrix 2.5 times slower, so it is
/// never picked up.
const MODULE_IN_TARGET: [&str; 2] = [
    "wasm32-unknown-unknown/wasm-engine/skblab_wasm.wasm",
    "wasm32-unknown-unknown/release/skblab_wasm.wasm",
];

/// The guest's budgets. Every scenario within the caps of `skblab_core::limits` fits both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wasmtime fuel: about one unit per wasm instruction.
    pub fuel: u64,
    /// The guest's linear memory, in bytes.
    pub memory_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 100_000_000_000,
            memory_bytes: 1 << 30,
        }
    }
}

/// How a module came to be ready to run.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub path: PathBuf,
    /// The compiled-module cache file, when it could be used or written.
    pub cache: Option<PathBuf>,
    /// Whether the code came from that cache (otherwise it was compiled now).
    pub from_cache: bool,
    pub elapsed: Duration,
}

/// A compiled module plus the limits every call runs under. Each call gets a fresh instance,
/// so no state (or leaked memory) carries over between scenarios.
pub struct WasmHost {
    engine: wasmtime::Engine,
    module: Module,
    limits: Limits,
    loaded: Loaded,
}

impl WasmHost {
    /// The process-wide host with default limits, loaded (and cached) on first use.
    pub fn shared() -> Result<&'static WasmHost, EngineError> {
        static HOST: OnceLock<Result<WasmHost, EngineError>> = OnceLock::new();
        HOST.get_or_init(|| WasmHost::load(&module_path()?, Limits::default()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Loads the module at `path`, from the compiled-module cache when it holds this exact
    /// module for this exact wasmtime configuration, else compiling it and filling the cache.
    pub fn load(path: &Path, limits: Limits) -> Result<WasmHost, EngineError> {
        let start = Instant::now();
        let engine = new_engine();
        let fail = |message: String| EngineError::Module {
            path: path.display().to_string(),
            message,
        };
        let wasm = std::fs::read(path).map_err(|e| fail(format!("cannot read: {e}")))?;
        let cache = cache_file(&engine, &wasm);
        let cached = cache.as_deref().and_then(read_cache).and_then(|file| {
            // SAFETY: deserializing runs native code from the file. We only read a regular
            // file, owned by this user and writable by no one else, in this user's private
            // cache directory (see `cache_dir`), named by the SHA-256 of the module it was
            // compiled from, written whole (write then rename) by `write_cache` below, and
            // whose code still has the checksum written beside it; wasmtime rejects artifacts
            // of another version or configuration.
            unsafe { Module::deserialize(&engine, &file[CHECKSUM..]) }.ok()
        });
        let from_cache = cached.is_some();
        let module = match cached {
            Some(m) => m,
            None => {
                // The one slow start (about 2 s): say why the terminal waits.
                if std::io::stderr().is_terminal() {
                    crate::output::stderr(
                        "skblab: compiling the wasm module (once; later runs use the cache)\n",
                    );
                }
                let m = Module::new(&engine, &wasm).map_err(|e| fail(format!("{e:#}")))?;
                if let Some(c) = &cache {
                    // A cache we cannot write only costs the next run a compile.
                    let _ = write_cache(&m, c);
                }
                m
            }
        };
        let loaded = Loaded {
            path: path.to_path_buf(),
            cache,
            from_cache,
            elapsed: start.elapsed(),
        };
        Ok(WasmHost {
            engine,
            module,
            limits,
            loaded,
        })
    }

    /// Compiles `wasm` bytes without touching any cache (tests with hand-made modules).
    pub fn from_bytes(wasm: &[u8], limits: Limits) -> Result<WasmHost, EngineError> {
        let start = Instant::now();
        let engine = new_engine();
        let module = Module::new(&engine, wasm).map_err(|e| EngineError::Module {
            path: "<bytes>".into(),
            message: format!("{e:#}"),
        })?;
        let loaded = Loaded {
            path: "<bytes>".into(),
            cache: None,
            from_cache: false,
            elapsed: start.elapsed(),
        };
        Ok(WasmHost {
            engine,
            module,
            limits,
            loaded,
        })
    }

    pub fn loaded(&self) -> &Loaded {
        &self.loaded
    }

    /// Runs a scenario in the guest.
    pub fn run(&self, scenario: &str, opts: &RunOptions) -> Result<Trace, EngineError> {
        let json = self.run_json(scenario, opts)?;
        serde_json::from_str(&json)
            .map_err(|e| EngineError::BadReply(format!("the trace JSON does not parse: {e}")))
    }

    /// Runs a scenario in the guest; the trace JSON exactly as the guest wrote it.
    pub fn run_json(&self, scenario: &str, opts: &RunOptions) -> Result<String, EngineError> {
        self.call(&self.request(scenario, opts)?)
            .map(|(json, _)| json)
    }

    /// The request bytes for a scenario (see `docs/wasm-abi.md`).
    pub fn request(&self, scenario: &str, opts: &RunOptions) -> Result<Vec<u8>, EngineError> {
        Request::new(scenario, opts)
            .encode()
            .map_err(EngineError::Scenario)
    }

    /// Sends raw request bytes and decodes the reply; also returns the fuel the call used.
    pub fn call(&self, request: &[u8]) -> Result<(String, u64), EngineError> {
        let (reply, fuel) = self.exchange(request)?;
        match Reply::decode(&reply).map_err(EngineError::BadReply)? {
            Reply::Trace(json) => Ok((json.to_string(), fuel)),
            Reply::Error(e) => Err(EngineError::Scenario(e)),
        }
    }

    /// One fresh instance: alloc, write the request, run, copy the reply out, free both.
    fn exchange(&self, request: &[u8]) -> Result<(Vec<u8>, u64), EngineError> {
        let mut store = Store::new(&self.engine, Guard::new(self.limits.memory_bytes));
        store.limiter(|g| g);
        store
            .set_fuel(self.limits.fuel)
            .map_err(|e| self.module_error(format!("{e:#}")))?;
        let instance = Instance::new(&mut store, &self.module, &[])
            .map_err(|e| guest_error(&store, self.limits, e))?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or_else(|| self.module_error("exports no `memory`".into()))?;
        let len = u32::try_from(request.len())
            .map_err(|_| EngineError::BadReply("request over 4 GiB".into()))?;
        let ptr = self.call_export::<u32, u32>(&mut store, &instance, "alloc", len)?;
        memory
            .write(&mut store, ptr as usize, request)
            .map_err(|_| {
                EngineError::BadReply(format!("alloc({len}) gave {ptr:#x}: outside memory"))
            })?;
        let packed =
            self.call_export::<(u32, u32), u64>(&mut store, &instance, "run", (ptr, len))?;
        let (out_ptr, out_len) = ((packed >> 32) as u32, packed as u32);
        let reply = read(&store, memory, out_ptr, out_len)?;
        for buf in [(ptr, len), (out_ptr, out_len)] {
            self.call_export::<(u32, u32), ()>(&mut store, &instance, "dealloc", buf)?;
        }
        let fuel = self.limits.fuel - store.get_fuel().unwrap_or(0);
        Ok((reply, fuel))
    }

    fn call_export<P, R>(
        &self,
        store: &mut Store<Guard>,
        instance: &Instance,
        name: &str,
        params: P,
    ) -> Result<R, EngineError>
    where
        P: wasmtime::WasmParams,
        R: wasmtime::WasmResults,
    {
        let func = instance
            .get_typed_func::<P, R>(&mut *store, name)
            .map_err(|e| self.module_error(format!("export `{name}`: {e:#}")))?;
        func.call(&mut *store, params)
            .map_err(|e| guest_error(store, self.limits, e))
    }

    fn module_error(&self, message: String) -> EngineError {
        EngineError::Module {
            path: self.loaded.path.display().to_string(),
            message,
        }
    }
}

/// Copies the reply out of guest memory, checking the guest's (ptr, len) first.
fn read(store: &Store<Guard>, memory: Memory, ptr: u32, len: u32) -> Result<Vec<u8>, EngineError> {
    let (start, end) = (ptr as usize, ptr as usize + len as usize);
    memory
        .data(store)
        .get(start..end)
        .map(<[u8]>::to_vec)
        .ok_or_else(|| {
            EngineError::BadReply(format!(
                "reply at {start:#x}..{end:#x} lies outside the guest's {} bytes of memory",
                memory.data_size(store)
            ))
        })
}

/// Names the limit a failed guest call ran into, else passes the trap on.
fn guest_error(store: &Store<Guard>, limits: Limits, e: wasmtime::Error) -> EngineError {
    if let Some(requested) = store.data().denied {
        EngineError::MemoryLimit {
            limit: limits.memory_bytes,
            requested,
        }
    } else if e.downcast_ref::<Trap>() == Some(&Trap::OutOfFuel) {
        EngineError::OutOfFuel { limit: limits.fuel }
    } else {
        EngineError::Trap(format!("{e:#}"))
    }
}

/// The store's limiter: wasmtime's [`StoreLimits`], remembering a refused memory growth so the
/// trap that follows (Rust aborts when an allocation fails) can be reported as the limit.
struct Guard {
    limits: StoreLimits,
    denied: Option<usize>,
}

impl Guard {
    fn new(memory_bytes: usize) -> Self {
        Guard {
            limits: wasmtime::StoreLimitsBuilder::new()
                .memory_size(memory_bytes)
                .instances(1)
                .build(),
            denied: None,
        }
    }
}

impl ResourceLimiter for Guard {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let ok = self.limits.memory_growing(current, desired, maximum)?;
        if !ok {
            self.denied = Some(desired);
        }
        Ok(ok)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}

fn new_engine() -> wasmtime::Engine {
    let mut config = wasmtime::Config::new();
    config.consume_fuel(true);
    config.compiler_inlining(wasmtime::Inlining::Yes);
    wasmtime::Engine::new(&config).expect("a fixed, valid wasmtime configuration")
}

/// The module to load: `$SKBLAB_WASM`, else the newest of [`MODULE_IN_TARGET`] under the
/// target directory this executable was built into (found by walking up from it, so
/// `CARGO_TARGET_DIR` and test binaries in `target/debug/deps` work alike), else under this
/// workspace's `target/`.
pub fn module_path() -> Result<PathBuf, EngineError> {
    if let Some(p) = std::env::var_os("SKBLAB_WASM").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(EngineError::ModuleMissing {
                looked: format!("{} (from SKBLAB_WASM)", p.display()),
            })
        };
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
    let modified = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let found = exe
        .ancestors()
        .skip(1)
        .chain([workspace.as_path()])
        .find_map(|dir| {
            MODULE_IN_TARGET
                .iter()
                .map(|m| dir.join(m))
                .filter_map(|p| Some((modified(&p)?, p)))
                .max()
                .map(|(_, p)| p)
        });
    found.ok_or_else(|| EngineError::ModuleMissing {
        looked: format!(
            "{} under the target directory of {}",
            MODULE_IN_TARGET.join(" or "),
            exe.display()
        ),
    })
}

/// `<cache_dir>/skblab_wasm-<key>.cwasm`; the key is the SHA-256 of the module bytes and of
/// everything wasmtime says a compiled artifact depends on (its version and configuration), as
/// wasmtime's own cache keys its entries.
fn cache_file(engine: &wasmtime::Engine, wasm: &[u8]) -> Option<PathBuf> {
    use sha2::{Digest, Sha256};
    let mut compat = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut compat);
    let key = Sha256::new()
        .chain_update(wasm)
        .chain_update(compat.finish().to_le_bytes())
        .finalize();
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    Some(cache_dir()?.join(format!("skblab_wasm-{hex}.cwasm")))
}

/// This user's cache directory, `$XDG_CACHE_HOME/skblab` (else `~/.cache/skblab`), created
/// private (0700). `None` (compile every time) unless it is a real directory owned by this
/// user that no one else can write: compiled code is loaded from it and run as native code,
/// so no other user may plant a file there (a shared folder beside `SKBLAB_WASM` could).
pub fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| Path::new(d).is_absolute())
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from(std::env::var_os("HOME")?).join(".cache")))?;
    private_dir(&base.join("skblab"))
}

/// `dir`, created 0700 if missing, if it is a directory (not a symlink) of this user's that
/// no one else may enter or write.
fn private_dir(dir: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir);
    let meta = std::fs::symlink_metadata(dir).ok()?;
    let private = meta.is_dir() && meta.uid() == euid() && meta.mode() & 0o077 == 0;
    private.then(|| dir.to_path_buf())
}

/// Whether a file is a regular file of this user's that no one else may write.
fn is_ours(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    m.is_file() && m.uid() == euid() && m.mode() & 0o022 == 0
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The bytes before the compiled code in a cache file: the code's SHA-256.
const CHECKSUM: usize = 32;

/// The cache file at `path` if it is ours and its code matches its checksum. wasmtime checks
/// an artifact's header and version, not its code: a file changed in the middle (a disk
/// error, a tool that edited it) would load and run broken machine code. The checksum catches
/// that, not an attacker (who could write both); ownership and modes keep others out.
fn read_cache(path: &Path) -> Option<Vec<u8>> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // Checked on the open file (no race with a rename); a FIFO does not block the open.
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !is_ours(&f.metadata().ok()?) {
        return None;
    }
    let mut file = Vec::new();
    f.read_to_end(&mut file).ok()?;
    let (sum, code) = file.split_at_checked(CHECKSUM)?;
    (Sha256::digest(code).as_slice() == sum).then_some(file)
}

/// Writes the checksum and the code atomically (a private temporary file, then rename), so
/// concurrent runs (parallel tests) never read a half-written file.
fn write_cache(module: &Module, path: &Path) -> std::io::Result<()> {
    use sha2::{Digest, Sha256};
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let code = module.serialize().map_err(std::io::Error::other)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(&Sha256::digest(&code))?;
    f.write_all(&code)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_a_private_cache_directory_and_our_own_files_are_trusted() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;

        let fresh = base.join("fresh/skblab");
        assert_eq!(private_dir(&fresh), Some(fresh.clone()));
        assert_eq!(mode(&fresh), 0o700, "created private");

        let shared = base.join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(private_dir(&shared), None, "a folder others can write");
        let link = base.join("link");
        std::os::unix::fs::symlink(&fresh, &link).unwrap();
        assert_eq!(private_dir(&link), None, "a symlink");

        let planted = fresh.join("planted.cwasm");
        std::fs::write(&planted, b"code").unwrap();
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o666)).unwrap();
        let meta = || std::fs::symlink_metadata(&planted).unwrap();
        assert!(!is_ours(&meta()), "a file others can write");
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(is_ours(&meta()));
    }

    #[test]
    fn a_cache_file_whose_code_changed_is_not_loaded() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let engine = new_engine();
        let module = Module::new(&engine, b"\0asm\x01\0\0\0").unwrap();
        let path = dir.join("m.cwasm");
        write_cache(&module, &path).unwrap();
        let good = read_cache(&path).expect("the file just written");
        // SAFETY: the file was written by `write_cache` just now, from this engine.
        unsafe { Module::deserialize(&engine, &good[CHECKSUM..]) }.unwrap();

        let mut changed = good.clone();
        let middle = changed.len() / 2;
        changed[middle] ^= 0xff;
        std::fs::write(&path, &changed).unwrap();
        assert!(read_cache(&path).is_none(), "a changed byte");
        std::fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert!(read_cache(&path).is_none(), "a truncated file");
        std::fs::write(&path, &good[..CHECKSUM - 1]).unwrap();
        assert!(read_cache(&path).is_none(), "shorter than its checksum");
        std::fs::write(&path, &good).unwrap();
        assert!(read_cache(&path).is_some(), "whole again");
    }

    #[test]
    fn the_cache_key_is_the_modules_sha256() {
        let engine = new_engine();
        let (a, b) = (cache_file(&engine, b"one"), cache_file(&engine, b"two"));
        let name = |p: &Option<PathBuf>| p.as_ref().map(|p| p.file_name().unwrap().to_owned());
        if let (Some(a), Some(b)) = (name(&a), name(&b)) {
            assert_ne!(a, b);
            // skblab_wasm- + 64 hex digits + .cwasm
            assert_eq!(a.len(), 12 + 64 + 6, "{a:?}");
        }
    }
}
