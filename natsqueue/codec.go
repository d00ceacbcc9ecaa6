package natsqueue

import "encoding/json"

// A Codec turns jobs into message bodies and back. Unmarshal receives a
// pointer to a zero job. Implementations must be safe for concurrent use.
type Codec interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// JSON is the default Codec: encoding/json.
type JSON struct{}

// Marshal encodes v with json.Marshal.
func (JSON) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal decodes data with json.Unmarshal.
func (JSON) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
