// Package spelling finds, among the names a program knows, the one a
// mistyped name was most likely meant to be: the flag of a command line
// ("--listn": --listen) or the field of a request body ("descuentos":
// descuento). It knows nothing of what the names stand for.
package spelling

import "strings"

// maxScore bounds how far a suggestion may be: a name needs a score below
// it to be suggested.
const maxScore = 3

// Nearest returns the name of known that name was most likely meant to
// be, or "" when none is close enough. Candidates are, best first:
//
//   - a name equal to name but for case and the separators '_' and '-'
//     (tipoDocumento for tipo_documento);
//   - a name one of whose leading or trailing words name is, or that is
//     one of name's leading or trailing words, for names of three letters
//     or more (--sandbox-trusted-ca for --trusted-ca; descuento for
//     montoDescuento), words being split at '_', '-' and where a lower-case
//     letter meets a capital;
//   - a name within two edits of name (Distance, without regard to case),
//     fewer edits than name has letters.
//
// Among equally close names the one fewer edits away wins, then the first
// in known.
func Nearest(name string, known []string) string {
	best, bestScore, bestDist := "", maxScore, 0
	lname := strings.ToLower(name)
	for _, k := range known {
		if k == name {
			continue
		}
		score, dist := score(name, lname, k)
		if score < bestScore || score == bestScore && dist < bestDist {
			best, bestScore, bestDist = k, score, dist
		}
	}
	return best
}

// score is how far the known name k is from name (lname, lower-cased):
// 0 for the same name spelled otherwise, 1 for a whole-word prefix or
// suffix, else the edit distance; and the edit distance.
func score(name, lname, k string) (int, int) {
	d := Distance(lname, strings.ToLower(k))
	switch {
	case squash(name) == squash(k):
		return 0, d
	case wordAffix(name, k) || wordAffix(k, name):
		return 1, d
	case d >= len(name):
		return maxScore, d // every letter changed: a guess, not a spelling
	}
	return d, d
}

// squash lower-cases s and drops its separators.
func squash(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
}

// wordAffix reports whether short, of three letters or more, is a whole
// word prefix or suffix of long, without regard to case.
func wordAffix(short, long string) bool {
	if len(short) < 3 || len(short) >= len(long) {
		return false
	}
	if n := len(long) - len(short); strings.EqualFold(long[n:], short) && wordStart(long, n) {
		return true
	}
	return strings.EqualFold(long[:len(short)], short) && wordStart(long, len(short))
}

// wordStart reports whether a word of s starts at byte i (0 < i < len(s)):
// after a separator, at a separator, or at a capital following a
// lower-case letter or a digit.
func wordStart(s string, i int) bool {
	prev, cur := s[i-1], s[i]
	switch {
	case prev == '_' || prev == '-' || cur == '_' || cur == '-':
		return true
	case cur >= 'A' && cur <= 'Z':
		return prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9'
	}
	return false
}

// Distance is the Levenshtein distance of a and b, by bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
