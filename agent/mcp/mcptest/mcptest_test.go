package mcptest_test

import (
	"bytes"
	"image/color"
	"image/png"
	"testing"

	"github.com/reel-agent/reel/agent/mcp/mcptest"
)

// TestPNG: the literal is the 2×2 image its comment describes.
func TestPNG(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(mcptest.PNG))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 2 || b.Dy() != 2 {
		t.Fatalf("bounds %v", b)
	}
	for _, c := range []struct {
		x, y int
		want color.RGBA
	}{{0, 0, color.RGBA{R: 255, A: 255}}, {1, 1, color.RGBA{B: 255, A: 255}}, {1, 0, color.RGBA{}}} {
		if got := color.RGBAModel.Convert(img.At(c.x, c.y)).(color.RGBA); got != c.want {
			t.Errorf("(%d,%d) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
}
