package llm

// UTF16Len is the length of s in UTF-16 code units, JavaScript's
// String.length, which pi's counts and limits use: one per character, two
// for characters outside the Basic Multilingual Plane. It counts valid
// UTF-8 exactly without decoding it (strings from JSON always are).
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b&0xC0 != 0x80 { // not a continuation byte: a new character
			n++
		}
		if b >= 0xF0 { // a four-byte sequence is a surrogate pair
			n++
		}
	}
	return n
}
