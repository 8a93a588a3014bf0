// Package event is the forge-neutral event a harness trigger: expression
// is evaluated against (the `event` variable of the CEL environment), and
// the CEL environment itself: Compile parses and type-checks an expression
// at harness load; Program.Match evaluates it under a cost limit.
//
// The event's shape follows upstream fullsend's normalized event (v1):
// repo, entity, transition, actor, state and source. Field names are the
// JSON keys of the event file. The event is declared with a typed schema
// (not upstream's dyn), so a misspelt field fails at load, not at dispatch.
package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/limit"
)

// MaxFileSize bounds an event file.
const MaxFileSize = 1 << 20

// Event is one event.
type Event struct {
	Repo       string     `json:"repo" cel:"repo"`
	Entity     Entity     `json:"entity" cel:"entity"`
	Transition Transition `json:"transition" cel:"transition"`
	Actor      Actor      `json:"actor" cel:"actor"`
	State      State      `json:"state" cel:"state"`
	Source     Source     `json:"source" cel:"source"`
}

// Entity is the work item (issue) or change proposal (pull request) the
// event is about.
type Entity struct {
	Kind                 string       `json:"kind" cel:"kind"` // work_item | change_proposal
	ID                   int64        `json:"id" cel:"id"`
	Key                  string       `json:"key" cel:"key"`
	URL                  string       `json:"url" cel:"url"`
	LinkedChangeProposal LinkedChange `json:"linked_change_proposal" cel:"linked_change_proposal"`
}

// LinkedChange is the change proposal linked to a work item.
type LinkedChange struct {
	ID  int64  `json:"id" cel:"id"`
	URL string `json:"url" cel:"url"`
}

// Transition is what happened: its kind (opened, edited, synchronized,
// label_changed, comment_added, review_submitted, check_completed, …) and
// the detail of that kind.
type Transition struct {
	Kind    string  `json:"kind" cel:"kind"`
	Label   Label   `json:"label" cel:"label"`
	Comment Comment `json:"comment" cel:"comment"`
	Review  Review  `json:"review" cel:"review"`
	Check   Check   `json:"check" cel:"check"`
}

// Label is a label_changed transition.
type Label struct {
	Name   string `json:"name" cel:"name"`
	Action string `json:"action" cel:"action"` // added | removed
}

// Comment is a comment transition.
type Comment struct {
	Command     string `json:"command" cel:"command"`
	Body        string `json:"body" cel:"body"`
	Instruction string `json:"instruction" cel:"instruction"`
}

// Review is a review_submitted transition.
type Review struct {
	State      string `json:"state" cel:"state"`
	ReviewerID string `json:"reviewer_id" cel:"reviewer_id"`
}

// Check is a check_completed transition.
type Check struct {
	Name              string  `json:"name" cel:"name"`
	Conclusion        string  `json:"conclusion" cel:"conclusion"`
	HeadSHA           string  `json:"head_sha" cel:"head_sha"`
	ChangeProposalIDs []int64 `json:"change_proposal_ids" cel:"change_proposal_ids"`
}

// Actor caused the event.
type Actor struct {
	ID             string `json:"id" cel:"id"`
	Kind           string `json:"kind" cel:"kind"` // human | bot
	Role           string `json:"role" cel:"role"` // admin, maintain, write, triage, read, none, external
	IsEntityAuthor bool   `json:"is_entity_author" cel:"is_entity_author"`
}

// State is the entity at event time.
type State struct {
	Labels         []string       `json:"labels" cel:"labels"`
	ChangeProposal ChangeProposal `json:"change_proposal" cel:"change_proposal"`
}

// ChangeProposal is the branch context of a pull request.
type ChangeProposal struct {
	ID       int64  `json:"id" cel:"id"`
	HeadRepo string `json:"head_repo" cel:"head_repo"`
	BaseRepo string `json:"base_repo" cel:"base_repo"`
	HeadRef  string `json:"head_ref" cel:"head_ref"`
	BaseRef  string `json:"base_ref" cel:"base_ref"`
	HeadSHA  string `json:"head_sha" cel:"head_sha"`
	AuthorID string `json:"author_id" cel:"author_id"`
	IsFork   bool   `json:"is_fork" cel:"is_fork"`
}

// Source is where the event came from.
type Source struct {
	System    string `json:"system" cel:"system"` // github | gitlab | jira | manual | schedule
	RawType   string `json:"raw_type" cel:"raw_type"`
	RawAction string `json:"raw_action" cel:"raw_action"`
}

// ErrInvalid marks an event file that is not an event.
var ErrInvalid = errors.New("not a valid event")

// Parse decodes an event strictly (an unknown key is an error) and checks
// the fields every trigger may rely on.
func Parse(data []byte) (*Event, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var e Event
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: more than one JSON value", ErrInvalid)
	}
	for _, f := range []struct{ name, v string }{
		{"repo", e.Repo}, {"entity.kind", e.Entity.Kind}, {"transition.kind", e.Transition.Kind},
		{"actor.id", e.Actor.ID}, {"source.system", e.Source.System},
	} {
		if strings.TrimSpace(f.v) == "" {
			return nil, fmt.Errorf("%w: %s is required", ErrInvalid, f.name)
		}
	}
	if e.State.Labels == nil {
		e.State.Labels = []string{}
	}
	return &e, nil
}

// ReadFile reads and parses the event file name, bounded by MaxFileSize.
func ReadFile(name string) (*Event, error) {
	data, err := limit.ReadFile(os.Open, name, MaxFileSize)
	var pe *os.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("event %s: %w", name, pe.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("event %w", err) // "NAME: larger than …"
	}
	e, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", name, err)
	}
	return e, nil
}
