package dorisio

// Option scopes. Every With… option of Write, WriteFiles and
// WriteFilesFrom is a value of one of the interfaces below, as franz-go's
// kgo types its options: an option that only Write takes (batch sizes,
// delivery, tables made from structs) is a WriteOption only, one that only
// stream batching reads is a StreamOption (a WriteOption too), and one that
// every transform takes (format, headers, retries) is a LoadOption, which
// is both a WriteOption and a FilesOption. So WriteFiles(…,
// WithMaxBatchRows(10)) does not compile: a file is loaded in ranges, and
// a batch option would do nothing there.

// WriteOption configures Write. A bad value, or a combination that would
// be ignored or silently lose one of its options, stops pipeline
// construction with a message naming the options and the values.
type WriteOption interface {
	option
	writeOption()
}

// FilesOption configures WriteFiles and WriteFilesFrom, checked as
// WriteOption is.
type FilesOption interface {
	option
	filesOption()
}

// StreamOption configures stream batching (WithStreamBatching): the windows
// of event time rows are held in and the shards they are spread over. Write
// takes it; WriteFiles does not.
type StreamOption interface {
	WriteOption
	streamOption()
}

// LoadOption is an option of every transform that loads: Write, WriteFiles
// and WriteFilesFrom (format, headers, compression, retries, time zone,
// rejected rows, loads in flight).
type LoadOption interface {
	WriteOption
	FilesOption
}

// option is any of the scopes: its name as written, for messages, and what
// it does to the options.
type option interface {
	apply(o *writeOptions)
}

// opt is an option named as written: `WithFormat(JSON)`.
type opt struct {
	name string
	set  func(*writeOptions)
}

// String is the option as written, so that printing an option shows it.
func (x opt) String() string { return x.name }

func (x opt) apply(o *writeOptions) {
	o.current = x.name
	o.applied++
	x.set(o)
	o.current = ""
}

type (
	writeOpt  struct{ opt } // Write only
	streamOpt struct{ opt } // Write, with stream batching only
	filesOpt  struct{ opt } // WriteFiles and WriteFilesFrom only
	loadOpt   struct{ opt } // every transform
)

func (writeOpt) writeOption()   {}
func (streamOpt) writeOption()  {}
func (streamOpt) streamOption() {}
func (filesOpt) filesOption()   {}
func (loadOpt) writeOption()    {}
func (loadOpt) filesOption()    {}

// forWrite, forStream, forFiles and forLoads make the option named name
// (as the user wrote it, with its arguments) of each scope.
func forWrite(name string, set func(*writeOptions)) WriteOption {
	return writeOpt{opt{name, set}}
}

func forStream(name string, set func(*writeOptions)) StreamOption {
	return streamOpt{opt{name, set}}
}

// forFiles is for options that only a file load reads.
func forFiles(name string, set func(*writeOptions)) FilesOption {
	return filesOpt{opt{name, set}}
}

func forLoads(name string, set func(*writeOptions)) LoadOption {
	return loadOpt{opt{name, set}}
}

// claim records that the option being applied sets what (a field, "the
// delivery", or a Stream Load header, "header strict_mode"): validate
// refuses two options that set the same thing, or one given twice, since
// the last would silently win.
func (o *writeOptions) claim(what string) {
	for _, c := range o.claims {
		if c.what == what && c.seq == o.applied {
			return // the same option, claiming twice on its way
		}
	}
	o.claims = append(o.claims, claim{what: what, by: o.current, seq: o.applied})
}

// claim is one option's hold on what it sets.
type claim struct {
	what string // "the format", "header strict_mode"
	by   string // the option, as written
	seq  int    // its ordinal among the options given
	bad  bool   // the option's value was refused
}
