package tsstrip

import (
	"strings"
	"testing"
)

// benchProgram is a typical typed run_code program.
const benchProgram = `interface Notes { totalLines: number; lines: { text: string }[] }
const notes = await tools.read({ file_path: "notes.txt" }) as Notes;
console.log("lines:", notes.totalLines);
const echo = await tools.bash({ command: "echo " + notes.lines[0]!.text, description: "Echo the first line" });
let missing: string | undefined;
try {
  await tools.read({ file_path: "missing.txt" });
} catch (e: any) {
  missing = e.name + " from " + e.toolName;
}
return { first: echo.stdout.text.trim(), exit: echo.exitCode, missing } satisfies Record<string, unknown>;
`

// BenchmarkStrip strips a typical program, and one 100 times its size.
func BenchmarkStrip(b *testing.B) {
	for _, tc := range []struct{ name, src string }{{"typical", benchProgram}, {"x100", strings.Repeat("{\n"+benchProgram+"}\n", 100)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.src)))
			for b.Loop() {
				if _, err := Strip(tc.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
