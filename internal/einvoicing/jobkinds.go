package einvoicing

// The arguments of the e-invoicing jobs: each type names its kind
// (jobs.Args), so a job is registered, inserted and decoded by its type.

func (submitArgs) Kind() string        { return KindSubmit }
func (pollArgs) Kind() string          { return KindPollCompany }
func (askArgs) Kind() string           { return KindAskSignature }
func (paceArgs) Kind() string          { return KindPace }
func (validateArgs) Kind() string      { return KindValidate }
func (QueryArgs) Kind() string         { return KindUJPQuery }
func (sandboxSignerArgs) Kind() string { return KindSandboxSigner }

// The periodic jobs take no arguments.
type (
	pollChangesArgs      struct{}
	expireSigningArgs    struct{}
	purgeSignedReadsArgs struct{}
	paceSweepArgs        struct{}
	inboxDeadlinesArgs   struct{}
)

func (pollChangesArgs) Kind() string      { return KindPollChanges }
func (expireSigningArgs) Kind() string    { return KindExpireSigning }
func (purgeSignedReadsArgs) Kind() string { return KindPurgeSignedReads }
func (paceSweepArgs) Kind() string        { return KindPaceSweep }
func (inboxDeadlinesArgs) Kind() string   { return KindInboxDeadlines }
