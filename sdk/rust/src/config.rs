//! The plugin's `guestConfig`, read once from the host and cached.

use crate::json::{self, Json, JsonError};
use crate::sys::{self, Kind};
use std::cell::Cell;

thread_local! {
    // Leaked once per instance (and per `testing::reset`), so callers get `'static` bytes.
    static CONFIG: Cell<Option<&'static [u8]>> = const { Cell::new(None) };
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn reset_cache() {
    CONFIG.with(|c| c.set(None));
}

/// The raw `guestConfig` bytes, or `None` when the plugin has no config.
/// The bytes are passed through unchanged (any format, NULs and all).
pub fn get() -> Option<&'static [u8]> {
    let bytes = CONFIG.with(|c| match c.get() {
        Some(b) => b,
        None => {
            let v = sys::read_with(Kind::Json, |b, l| unsafe { sys::get_config(b, l) });
            let leaked: &'static [u8] = Box::leak(v.into_boxed_slice());
            c.set(Some(leaked));
            leaked
        }
    });
    if bytes.is_empty() {
        None
    } else {
        Some(bytes)
    }
}

/// The config as UTF-8 text (`None` when absent or not UTF-8).
pub fn get_str() -> Option<&'static str> {
    get().and_then(|b| std::str::from_utf8(b).ok())
}

/// The config parsed as JSON; `Ok(None)` when there is no config.
pub fn json() -> Result<Option<Json>, JsonError> {
    get().map(json::parse).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[test]
    fn read_once_and_cached() {
        testing::reset();
        testing::set("get_config", b"a\0f\xc3\xb3o".to_vec());
        assert_eq!(get(), Some(&b"a\0f\xc3\xb3o"[..]));
        assert_eq!(get_str(), Some("a\0fóo"));
        testing::set_config("changed");
        assert_eq!(get(), Some(&b"a\0f\xc3\xb3o"[..]));
        assert_eq!(testing::calls("get_config").len(), 1);
    }

    #[test]
    fn absent_config() {
        testing::reset();
        assert_eq!(get(), None);
        assert_eq!(json(), Ok(None));
        assert_eq!(testing::calls("get_config").len(), 1);
        let _ = get();
        assert_eq!(testing::calls("get_config").len(), 1);
    }

    #[test]
    fn json_config() {
        testing::reset();
        testing::set_config(r#"{"reverse": true}"#);
        let v = json().unwrap().unwrap();
        assert_eq!(v.get("reverse").and_then(Json::as_bool), Some(true));
        testing::reset();
        testing::set_config("{bad");
        assert!(json().is_err());
    }
}
