package keygroup

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// KeyType is the Java class of a key: it decides which hashCode Flink uses.
// The zero value is not a key type.
type KeyType int

// The key types a job in the simulator can key by.
const (
	// KeyTypeString is java.lang.String: String.hashCode over UTF-16 code units.
	KeyTypeString KeyType = 1 + iota
	// KeyTypeLong is java.lang.Long: (int)(v ^ (v >>> 32)).
	KeyTypeLong
	// KeyTypeInt is java.lang.Integer: the value itself.
	KeyTypeInt
)

// String returns the key type's name as the CLI spells it: "string", "long", "int".
func (kt KeyType) String() string {
	switch kt {
	case KeyTypeString:
		return "string"
	case KeyTypeLong:
		return "long"
	case KeyTypeInt:
		return "int"
	default:
		return fmt.Sprintf("KeyType(%d)", int(kt))
	}
}

// JavaClass returns the Java class name of the key type: "String", "Long",
// "Integer"; "" for an invalid KeyType.
func (kt KeyType) JavaClass() string {
	switch kt {
	case KeyTypeString:
		return "String"
	case KeyTypeLong:
		return "Long"
	case KeyTypeInt:
		return "Integer"
	default:
		return ""
	}
}

// ErrUnknownKeyType is returned (wrapped) by ParseKeyType and HashCodeOf for a
// key type they do not know.
var ErrUnknownKeyType = errors.New("unknown key type")

// ParseKeyType reads a key type name, case-insensitively: "string", "long",
// "int", or the Java class names "String", "Long", "Integer". Anything else
// wraps ErrUnknownKeyType.
func ParseKeyType(s string) (KeyType, error) {
	switch strings.ToLower(s) {
	case "string":
		return KeyTypeString, nil
	case "long":
		return KeyTypeLong, nil
	case "int", "integer":
		return KeyTypeInt, nil
	default:
		return 0, fmt.Errorf("%w %q: want string, long or int", ErrUnknownKeyType, s)
	}
}

// NumberFormatError reports key text that is not a decimal number of its key
// type, as Java's Long.parseLong / Integer.parseInt would refuse it (a
// java.lang.NumberFormatException, whose message Error includes).
type NumberFormatError struct {
	Key  string  // the text as given
	Type KeyType // KeyTypeLong or KeyTypeInt
}

func (e *NumberFormatError) Error() string {
	return fmt.Sprintf("key is not a decimal %s (%s): For input string: %q",
		e.Type.JavaClass(), rangeOf(e.Type), e.Key)
}

func rangeOf(kt KeyType) string {
	if kt == KeyTypeInt {
		return "-2147483648..2147483647"
	}
	return "-9223372036854775808..9223372036854775807"
}

// HashCodeOf returns the Java hashCode of the key given as text: for
// KeyTypeString the text itself (StringHashCode); for KeyTypeLong and
// KeyTypeInt the decimal number it spells (LongHashCode, IntHashCode).
//
// Numbers are read like Long.parseLong / Integer.parseInt: an optional '+' or
// '-' and ASCII digits, no spaces, no underscores, within the type's range;
// otherwise a *NumberFormatError. (Java also accepts non-ASCII Unicode
// digits; this function does not.) An invalid kt wraps ErrUnknownKeyType.
func HashCodeOf(key string, kt KeyType) (int32, error) {
	switch kt {
	case KeyTypeString:
		return StringHashCode(key), nil
	case KeyTypeLong:
		v, err := parseDecimal(key, 64)
		if err != nil {
			return 0, &NumberFormatError{Key: key, Type: kt}
		}
		return LongHashCode(v), nil
	case KeyTypeInt:
		v, err := parseDecimal(key, 32)
		if err != nil {
			return 0, &NumberFormatError{Key: key, Type: kt}
		}
		return IntHashCode(int32(v)), nil
	default:
		return 0, fmt.Errorf("%w %v", ErrUnknownKeyType, kt)
	}
}

// parseDecimal reads base-10 text the way Java's parseLong/parseInt accept it
// (strconv with base 10 already refuses underscores, spaces and prefixes).
func parseDecimal(s string, bitSize int) (int64, error) {
	return strconv.ParseInt(s, 10, bitSize)
}
