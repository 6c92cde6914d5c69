"""Private pieces both halves of the kit share (executor certification and tool checks).

Each exists here exactly once:

- `text`: shortening/clipping, describing an exception, the `STR_FAILED` marker, `json_text`;
- `data`: `thaw` (the one plain copy), `ints_to_floats`, `arguments_key`;
- `dialect`: which jsonschema validator class a schema's `$schema` names;
- `generation`: the one generator of valid arguments and the one use of hypothesis-jsonschema;
- `deadline`: the one runner that puts a target's call under a deadline (`DeadlineRunner`);
- `hypo`: the profiles as frozen values, the settings builder and the database digest hook;
- `target`: `module:attr` resolution with one `sys.path` policy;
- `options`: reading the plugin's `--conformance-*` options;
- `limits`: the default deadlines and the grace period;
- `watchdog`, `child`, `supervise`: the command line's child process (started, timed and killed
  by the parent in `watchdog`; the child's side in `child`; certify/check-tools over it in
  `supervise`).

Nothing here is public API: import the public names from `conformance` and its modules.
"""
