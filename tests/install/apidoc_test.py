#!/usr/bin/env python3
"""tools/apidoc.py on headers written for the purpose: what counts as a comment, what does not,
and that --check fails on an undocumented function and on a stale docs/api.md."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

APIDOC = pathlib.Path(__file__).resolve().parents[2] / "tools" / "apidoc.py"

HEADER = """/* demo: a header for the test. */
#ifndef DEMO_H
#define DEMO_H
#ifdef __cplusplus
extern "C" {
#endif

/* ---- section one ------------------------------------------------------------------------ */
/* Documents the run below: both a and b. */
int ddt_a(int x);
int ddt_b(int *y);
int ddt_c(void); /* trailing: c alone */
%s

/* ---- section two --------------------------------------------------------------------------
 * The section's own text. */
static inline int ddt_helper_(int v) { return v; }
/* An inline one. */
static inline int ddt_d(int v) {
  return ddt_helper_(v);
}

#ifdef __cplusplus
}
#endif
#endif
"""


def run(root, *args):
    return subprocess.run([sys.executable, str(APIDOC), "--root", str(root), *args],
                          capture_output=True, text=True)


class ApidocTest(unittest.TestCase):
    def project(self, extra):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        root = pathlib.Path(tmp.name)
        (root / "include").mkdir()
        (root / "include" / "demo.h").write_text(HEADER % extra)
        return root

    def test_documented_header_passes_once_generated(self):
        root = self.project("")
        self.assertNotEqual(run(root, "--check").returncode, 0)  # no docs/api.md yet
        self.assertEqual(run(root).returncode, 0)
        r = run(root, "--check")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("4 public functions", r.stdout)  # ddt_helper_ is internal
        api = (root / "docs" / "api.md").read_text()
        for name in ("ddt_a", "ddt_b", "ddt_c", "ddt_d"):
            self.assertIn(f"#### {name}" if name in ("ddt_c", "ddt_d") else name, api)
        self.assertIn("trailing: c alone", api)
        self.assertIn("The section's own text.", api)
        self.assertNotIn("ddt_helper_", api)
        self.assertNotIn("return v", api)  # definitions show their signature only

    def test_function_after_a_trailing_comment_is_not_covered_by_the_run_comment(self):
        root = self.project("int ddt_e(void);")
        self.assertEqual(run(root).returncode, 0)
        r = run(root, "--check")
        self.assertEqual(r.returncode, 1)
        self.assertIn("demo.h:13: ddt_e has no comment", r.stdout)

    def test_comment_cut_off_by_a_blank_line_does_not_count(self):
        root = self.project("\n/* a paragraph, not a doc comment */\n\nint ddt_f(void);")
        run(root)
        r = run(root, "--check")
        self.assertEqual(r.returncode, 1)
        self.assertIn("ddt_f has no comment", r.stdout)
        self.assertNotIn("ddt_a has no comment", r.stdout)

    def test_stale_reference_fails_with_the_command_to_run(self):
        root = self.project("")
        run(root)
        header = root / "include" / "demo.h"
        header.write_text(header.read_text().replace("both a and b", "both a and b, changed"))
        r = run(root, "--check")
        self.assertEqual(r.returncode, 1)
        self.assertIn("run `python3 tools/apidoc.py`", r.stdout)
        self.assertIn("changed", r.stdout)  # the diff shows what moved


if __name__ == "__main__":
    unittest.main()
