//! Guest SDK for scheduler plugins compiled to WebAssembly.
//!
//! A plugin built with this crate speaks the ABI of kubernetes-sigs/kube-scheduler-wasm-extension
//! (imports `k8s.io/api`, `k8s.io/klog`, `k8s.io/scheduler`; parameterless exports such as
//! `filter` and `score`), so the same `.wasm` runs in upstream's Go host and in wasmsched.
//!
//! ```
//! use wasmsched_guest::{register, CycleState, Filter, LazyPod, NodeInfo, Status};
//!
//! #[derive(Default)]
//! struct OnlySsd;
//!
//! impl Filter for OnlySsd {
//!     fn filter(&mut self, _: &mut CycleState, _: &LazyPod, node: &NodeInfo) -> Status {
//!         match node.node().and_then(|n| n.label("disktype")) {
//!             Some("ssd") => Status::SUCCESS,
//!             _ => Status::unschedulable("node has no SSD"),
//!         }
//!     }
//! }
//!
//! // Exports `filter` (and `_start`, which constructs the plugin) and nothing else.
//! register!(OnlySsd; filter);
//! # fn main() {}
//! ```
//!
//! Build it as a `cdylib` for `wasm32-wasi` (Rust ≤ 1.83) or `wasm32-wasip1`.
//! Inputs are fetched lazily: a hook that never looks at the pod costs no pod transfer.
//! On non-wasm targets the host functions are served by [`testing`], so plugins and the
//! SDK itself can be unit-tested with `cargo test`.

#![warn(missing_docs)]

pub mod api;
mod cell;
pub mod config;
pub mod cycle;
pub mod events;
pub mod handle;
pub mod hooks;
pub mod json;
pub mod klog;
pub mod lister;
pub mod pb;
pub mod pod;
pub mod quantity;
#[doc(hidden)]
pub mod rt;
pub mod status;
mod sys;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

pub use crate::cycle::CycleState;
pub use crate::events::{ActionType, ClusterEvent, Resource};
pub use crate::hooks::{
    Bind, EnqueueExtensions, Filter, FilteredNodes, NodeScore, NodeScores, NodeToStatusMap, NormalizeScore,
    Permit, PostBind, PostFilter, PreBind, PreFilter, PreFilterExtensions, PreScore, Reserve, Score,
};
pub use crate::lister::NodeInfo;
pub use crate::pod::LazyPod;
pub use crate::status::{Code, NominatingInfo, NominatingMode, Status};

#[doc(hidden)]
pub use crate::rt as __rt;

/// Registers the plugin type and emits one wasm export per listed hook.
///
/// `register!(Type = constructor_expression; hook, hook, ...)` or, for a `Default` type,
/// `register!(Type; hook, ...)`. The constructor runs once per guest instance, inside
/// `_start` (so a failing config makes plugin creation fail, as with upstream's SDK).
///
/// Hooks and the trait each requires:
///
/// | hook | exports | trait |
/// |---|---|---|
/// | `enqueue` | `enqueue` | [`EnqueueExtensions`] |
/// | `prefilter` | `prefilter` (also starts each cycle, see [`cycle`]) | [`PreFilter`] |
/// | `filter` | `filter` | [`Filter`] |
/// | `postfilter` | `postfilter` | [`PostFilter`] |
/// | `prefilter_extensions` | `addpod`, `removepod` | [`PreFilterExtensions`] |
/// | `prescore` | `prescore` | [`PreScore`] |
/// | `score` | `score` | [`Score`] |
/// | `normalizescore` | `normalizescore` | [`NormalizeScore`] |
/// | `reserve` | `reserve`, `unreserve` | [`Reserve`] |
/// | `permit` | `permit` | [`Permit`] |
/// | `prebind` | `prebind` | [`PreBind`] |
/// | `bind` | `bind` | [`Bind`] |
/// | `postbind` | `postbind` | [`PostBind`] |
///
/// On non-wasm targets the same functions are generated without `#[no_mangle]` (so they
/// cannot clash with libc's `bind`) and can be called directly from tests.
#[macro_export]
macro_rules! register {
    ($ty:ty = $ctor:expr; $($hook:ident),+ $(,)?) => {
        ::std::thread_local! {
            static __WASMSCHED_PLUGIN: ::core::cell::RefCell<::core::option::Option<$ty>> =
                ::core::cell::RefCell::new(::core::option::Option::None);
        }

        /// Runs `f` with the plugin instance, constructing it on first use.
        fn __wasmsched_with<R>(f: impl ::core::ops::FnOnce(&mut $ty) -> R) -> R {
            __WASMSCHED_PLUGIN.with(|cell| {
                let mut slot = cell.borrow_mut();
                if slot.is_none() {
                    $crate::__rt::init();
                    *slot = ::core::option::Option::Some($ctor);
                }
                f(slot.as_mut().expect("plugin constructed above"))
            })
        }

        /// Constructs the plugin when the host instantiates the guest.
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn _start() {
            __wasmsched_with(|_| ());
        }

        $( $crate::__export!($hook, $ty); )+
    };
    ($ty:ty; $($hook:ident),+ $(,)?) => {
        $crate::register!($ty = <$ty as ::core::default::Default>::default(); $($hook),+);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __export {
    (enqueue, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn enqueue() {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::enqueue(p))
        }
    };
    (prefilter, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn prefilter() -> i32 {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::prefilter(p))
        }
    };
    (filter, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn filter() -> i32 {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::filter(p))
        }
    };
    (postfilter, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn postfilter() -> i64 {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::postfilter(p))
        }
    };
    (prefilter_extensions, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn addpod() -> i32 {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::addpod(p))
        }
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn removepod() -> i32 {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::removepod(p))
        }
    };
    (prescore, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn prescore() -> i32 {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::prescore(p))
        }
    };
    (score, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn score() -> i64 {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::score(p))
        }
    };
    (normalizescore, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn normalizescore() -> i32 {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::normalizescore(p))
        }
    };
    (reserve, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn reserve() -> i32 {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::reserve(p))
        }
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn unreserve() {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::unreserve(p))
        }
    };
    (permit, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn permit() -> i64 {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::permit(p))
        }
    };
    (prebind, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn prebind() -> i32 {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::prebind(p))
        }
    };
    (bind, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn bind() -> i32 {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::bind(p))
        }
    };
    (postbind, $ty:ty) => {
        #[cfg_attr(target_arch = "wasm32", no_mangle)]
        pub extern "C" fn postbind() {
            __wasmsched_with(|p: &mut $ty| $crate::__rt::postbind(p))
        }
    };
    ($other:ident, $ty:ty) => {
        ::core::compile_error!(::core::concat!(
            "unknown wasmsched hook `",
            ::core::stringify!($other),
            "`; expected enqueue, prefilter, filter, postfilter, prefilter_extensions, ",
            "prescore, score, normalizescore, reserve, permit, prebind, bind or postbind"
        ));
    };
}
