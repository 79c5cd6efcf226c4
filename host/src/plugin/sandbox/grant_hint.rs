//! What a failing guest may have lacked. The host cannot see which variable or path a guest
//! wanted: WASI hands the environment over whole, so an ungranted variable just looks unset, and
//! a path outside every preopened folder fails inside the guest without reaching the host. So
//! when a guest fails of itself, the message names the kinds of grant it has none of among
//! those it asked for (`asked`): the author then knows where to look. Socket denials need no
//! hint — the host records those exactly ([`crate::plugin::Fault::NotGranted`]).

use super::asked::Asked;
use crate::config::Grants;

/// The hint for a guest that `asked` for these under `grants`, or `None` when it lacks
/// nothing it looked for.
pub(crate) fn missing_grants(asked: Asked, grants: &Grants) -> Option<String> {
    let mut lacks = Vec::new();
    if asked.env && grants.env.is_empty() {
        lacks.push("no grants.env (variables it reads look unset)");
    }
    if asked.dirs && grants.dirs.is_empty() {
        lacks.push("no grants.dirs (paths look missing)");
    }
    (!lacks.is_empty()).then(|| format!("it has {}", lacks.join(" and ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DirGrant;

    #[test]
    fn names_only_the_grants_it_lacks_among_what_it_asked_for() {
        let both = Asked { env: true, dirs: true };
        let none = Grants::default();
        assert_eq!(
            missing_grants(both, &none).as_deref(),
            Some(
                "it has no grants.env (variables it reads look unset) and no grants.dirs (paths look missing)"
            )
        );
        let env = Grants { env: vec!["TOKEN".into()], ..Grants::default() };
        assert_eq!(missing_grants(both, &env).as_deref(), Some("it has no grants.dirs (paths look missing)"));
        let dir = DirGrant { written: "d".into(), host: "/d".into(), guest: None, writable: false };
        assert_eq!(missing_grants(both, &Grants { dirs: vec![dir], ..env }), None);
        assert_eq!(missing_grants(Asked::default(), &none), None, "asked for neither");
        assert_eq!(
            missing_grants(Asked { env: true, dirs: false }, &none).as_deref(),
            Some("it has no grants.env (variables it reads look unset)")
        );
    }
}
