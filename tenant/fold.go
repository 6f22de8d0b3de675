package tenant

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// FoldName folds a legal name for case- and accent-insensitive search:
// lower case, accents and other combining marks removed, white space runs
// collapsed to one space. "Ñandú  S.A." folds to "nandu s.a.". Stores keep
// the folded name beside the real one and match substrings of it.
func FoldName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
