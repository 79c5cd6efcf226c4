//! `toolport session`, the interactive host, driven as a script and on a terminal.

mod scripted;
