//! `info!` and friends: `format!`-style lines into the host's log (tracing), tagged by the host
//! with the plugin's name. The host caps a line at 4 KiB and escapes control characters.

/// Writes one line at `level` to the host's log. The macros call this.
pub fn write(level: crate::Level, message: &str) {
    crate::toolport::plugin::log::log(level, message);
}

/// Logs at an explicit [`Level`](crate::Level): `toolport_guest::log!(Level::Info, "{n} tools")`.
#[macro_export]
macro_rules! log {
    ($level:expr, $($arg:tt)+) => {
        $crate::__log_write($level, &::std::format!($($arg)+))
    };
}

/// Logs at `trace`: `toolport_guest::trace!("{}", x)`.
#[macro_export]
macro_rules! trace {
    ($($arg:tt)+) => { $crate::log!($crate::Level::Trace, $($arg)+) };
}

/// Logs at `debug`.
#[macro_export]
macro_rules! debug {
    ($($arg:tt)+) => { $crate::log!($crate::Level::Debug, $($arg)+) };
}

/// Logs at `info`: `toolport_guest::info!("{} tools", n)`.
#[macro_export]
macro_rules! info {
    ($($arg:tt)+) => { $crate::log!($crate::Level::Info, $($arg)+) };
}

/// Logs at `warn`.
#[macro_export]
macro_rules! warn {
    ($($arg:tt)+) => { $crate::log!($crate::Level::Warn, $($arg)+) };
}

/// Logs at `error`.
#[macro_export]
macro_rules! error {
    ($($arg:tt)+) => { $crate::log!($crate::Level::Error, $($arg)+) };
}
