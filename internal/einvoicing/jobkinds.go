package einvoicing

// The arguments of the e-invoicing jobs: each type names its kind
// (jobs.Args), so a job is registered, inserted and decoded by its type.

func (SubmitArgs) Kind() string   { return KindSubmit }
func (PollArgs) Kind() string     { return KindPollCompany }
func (AskArgs) Kind() string      { return KindAskSignature }
func (PaceArgs) Kind() string     { return kindPace }
func (validateArgs) Kind() string { return kindValidate }
func (QueryArgs) Kind() string    { return KindUJPQuery }

// purgeSignedReadsArgs: the periodic purge takes no arguments.
type purgeSignedReadsArgs struct{}

func (purgeSignedReadsArgs) Kind() string { return KindPurgeSignedReads }
