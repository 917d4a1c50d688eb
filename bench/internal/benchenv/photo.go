package benchenv

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math"
)

// PhotoJPEG encodes a w×h photo-like JPEG (Photo) at quality: the upload
// benchmarks' fixture.
func PhotoJPEG(w, h, quality int) ([]byte, error) {
	var b bytes.Buffer
	err := jpeg.Encode(&b, Photo{W: w, H: h}, &jpeg.Options{Quality: quality})
	return b.Bytes(), err
}

// Photo is a procedural photo-like image: smooth gradients and soft shapes
// plus per-pixel noise, so it compresses and decodes like a photograph.
// Its pixels are computed on demand (no raster held).
type Photo struct{ W, H int }

func (p Photo) ColorModel() color.Model { return color.RGBAModel }
func (p Photo) Bounds() image.Rectangle { return image.Rect(0, 0, p.W, p.H) }

func (p Photo) At(x, y int) color.Color {
	fx, fy := float64(x)/float64(p.W), float64(y)/float64(p.H)
	r := 70 + 120*fy // sky-to-ground gradient
	g := 110 + 60*fx
	b := 200 - 130*fy
	s := math.Sin(fx*9.3+math.Cos(fy*4.1)*2) * math.Cos(fy*7.7-fx*3) // soft shapes
	r += 40 * s
	g += 30 * math.Sin(fx*23+fy*17)
	b += 25 * s * math.Cos(fx*13)
	t := math.Sin(float64(x)*0.21+math.Sin(float64(y)*0.05)*6) * 12 * fx // texture
	v := uint32(x)*0x9E3779B1 ^ uint32(y)*0x85EBCA77                     // noise
	v ^= v >> 15
	v *= 0x2C1B3C6D
	v ^= v >> 12
	n := float64(v%33) - 16
	return color.RGBA{clamp(r + t + n), clamp(g + t + n*0.8), clamp(b + t + n*1.2), 255}
}

func clamp(v float64) uint8 { return uint8(math.Max(0, math.Min(255, v))) }
