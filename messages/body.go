package messages

// Body is any of Envelope's oneof bodies (&Envelope_Fetch{...}, ...). The
// generated interface is unexported; this alias lets actors build envelopes.
type Body = isEnvelope_Body

// Field constructors for LogEvent fields.

// Int is an integer log field.
func Int(key string, v int64) *Field { return &Field{Key: key, Value: &Field_Int{Int: v}} }

// Str is a string log field.
func Str(key, v string) *Field { return &Field{Key: key, Value: &Field_Str{Str: v}} }

// Bool is a boolean log field.
func Bool(key string, v bool) *Field { return &Field{Key: key, Value: &Field_Bool{Bool: v}} }

// Float is a floating-point log field.
func Float(key string, v float64) *Field { return &Field{Key: key, Value: &Field_Float{Float: v}} }

// Raw is a log field whose value is already-encoded JSON (an array or object).
func Raw(key, json string) *Field { return &Field{Key: key, Value: &Field_RawJson{RawJson: json}} }
