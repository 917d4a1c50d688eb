package images

import (
	"bytes"
	"image/jpeg"
)

// reuseMaxQuality is the highest quality (IJG scale, estimated from the
// luma quantisation table) at which an original JPEG is served as its own
// unscaled variant rather than re-encoded at q80: up to about the
// re-encode's own quality its bytes are no bigger, and they carry no second
// generation of loss.
const reuseMaxQuality = 80

// stdLumaSum is the sum of the IJG standard luminance quantisation table
// (ITU T.81 Annex K.1), which libjpeg and most encoders scale by quality.
const stdLumaSum = 16 + 11 + 10 + 16 + 24 + 40 + 51 + 61 +
	12 + 12 + 14 + 19 + 26 + 58 + 60 + 55 +
	14 + 13 + 16 + 24 + 40 + 57 + 69 + 56 +
	14 + 17 + 22 + 29 + 51 + 87 + 80 + 62 +
	18 + 22 + 37 + 56 + 68 + 109 + 103 + 77 +
	24 + 35 + 55 + 64 + 81 + 104 + 113 + 92 +
	49 + 64 + 78 + 87 + 103 + 121 + 120 + 101 +
	72 + 92 + 95 + 98 + 112 + 100 + 103 + 99

// strippedJPEG returns the JPEG in data without its metadata (APP1 to APP13
// and APP15 segments: EXIF, XMP, ICC profiles, IPTC, ...; comments) and
// without anything after its end marker, for serving as a variant in place
// of a re-encode. ok is false, and the caller re-encodes, unless data is a
// baseline Huffman JPEG (SOF0 or SOF1) of 8-bit samples, greyscale or
// YCbCr 4:2:0 (what the re-encode would use), whose luma quantisation is
// that of quality reuseMaxQuality or lower. JFIF (APP0) and Adobe (APP14,
// which tells how to convert the colours) segments are kept. The pixels
// are the same: every segment the decoder needs, and the entropy-coded
// data, are copied unchanged.
func strippedJPEG(data []byte) (out []byte, ok bool) {
	if len(data) < 4 || data[0] != 0xFF || data[1] != 0xD8 {
		return nil, false
	}
	out = make([]byte, 0, len(data))
	out = append(out, 0xFF, 0xD8)
	var sawFrame, sawScan, lumaOK bool
	i := 2
	for {
		if i+1 >= len(data) || data[i] != 0xFF {
			return nil, false
		}
		for i+1 < len(data) && data[i+1] == 0xFF { // fill bytes
			i++
		}
		if i+1 >= len(data) {
			return nil, false
		}
		m := data[i+1]
		i += 2
		if m == 0xD9 { // EOI: whatever follows (e.g. MPF images) is dropped
			if !sawFrame || !sawScan || !lumaOK {
				return nil, false
			}
			out = append(out, 0xFF, 0xD9)
			// The file decoded with libvips before it got here; the
			// standard library's reading of the copy's header is a last
			// check that nothing the decoder needs was dropped.
			if _, err := jpeg.DecodeConfig(bytes.NewReader(out)); err != nil {
				return nil, false
			}
			return out, true
		}
		if m == 0x01 || m == 0xD8 || (m >= 0xD0 && m <= 0xD7) {
			return nil, false // not expected between segments
		}
		if i+2 > len(data) {
			return nil, false
		}
		n := int(data[i])<<8 | int(data[i+1])
		if n < 2 || i+n > len(data) {
			return nil, false
		}
		seg, body := data[i-2:i+n], data[i+2:i+n]
		i += n
		switch {
		case (m >= 0xE1 && m <= 0xED) || m == 0xEF || m == 0xFE:
			continue // metadata: dropped
		case m == 0xC0 || m == 0xC1:
			if !baseline420(body) {
				return nil, false
			}
			sawFrame = true
		case m >= 0xC2 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC:
			return nil, false // progressive, lossless or arithmetic-coded
		case m == 0xDB:
			if lumaOK, ok = lumaTables(body, lumaOK); !ok {
				return nil, false
			}
		case m == 0xDA:
			// The scan header, then its entropy-coded data.
			j := scanEnd(data, i)
			out = append(out, seg...)
			out = append(out, data[i:j]...)
			i = j
			sawScan = true
			continue
		}
		out = append(out, seg...)
	}
}

// lumaTables reads the quantisation tables of a DQT segment's body: ok is
// false for 16-bit tables, and lumaOK (what an earlier segment said, if
// this one has no luma table) says the luma table is that of quality
// reuseMaxQuality or lower.
func lumaTables(body []byte, lumaOK bool) (_ bool, ok bool) {
	for j := 0; j < len(body); j += 65 {
		if body[j]>>4 != 0 || j+65 > len(body) {
			return false, false // 16-bit tables
		}
		if body[j]&0x0F == 0 {
			lumaOK = quality(body[j+1:j+65]) <= reuseMaxQuality
		}
	}
	return lumaOK, true
}

// scanEnd is the index in data of the marker that ends the entropy-coded
// data starting at i (0xFF 0x00 is a stuffed byte, 0xFF 0xD0-D7 a
// restart), or len(data)-1 if none does.
func scanEnd(data []byte, i int) int {
	j := i
	for j+1 < len(data) {
		if data[j] == 0xFF && data[j+1] != 0x00 && (data[j+1] < 0xD0 || data[j+1] > 0xD7) {
			break
		}
		j++
	}
	return j
}

// baseline420 reports whether a SOF0/SOF1 body describes 8-bit samples
// with one component, or three sampled 2×2, 1×1, 1×1.
func baseline420(body []byte) bool {
	if len(body) < 6 || body[0] != 8 {
		return false
	}
	nc := int(body[5])
	if len(body) < 6+3*nc {
		return false
	}
	switch nc {
	case 1:
		return true
	case 3:
		return body[7] == 0x22 && body[10] == 0x11 && body[13] == 0x11
	}
	return false
}

// quality estimates the IJG quality a luma quantisation table was scaled
// to (libjpeg: entry = standard × s / 100, s = 200 − 2q from q 50 up, else
// 5000 / q).
func quality(table []byte) int {
	sum := 0
	for _, v := range table {
		sum += int(v)
	}
	s := float64(sum) * 100 / stdLumaSum
	if s <= 0 {
		return 100
	}
	if s <= 100 {
		return int((200 - s) / 2)
	}
	return int(5000 / s)
}
