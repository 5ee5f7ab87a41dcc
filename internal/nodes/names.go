package nodes

import pub "github.com/adaptrag/adaptrag/nodes"

// The names of the graph's nodes, edge labels and collections are public in
// package nodes (github.com/adaptrag/adaptrag/nodes); these are the same
// constants under their short names.
const (
	NodeDecide     = pub.NodeDecide
	NodeDirect     = pub.NodeDirect
	NodeUnderstand = pub.NodeUnderstand
	NodeClarify    = pub.NodeClarify
	NodeClassify   = pub.NodeClassify
	NodeChitchat   = pub.NodeChitchat
	NodePlan       = pub.NodePlan
	NodeParts      = pub.NodeParts
	NodePart       = pub.NodePart
	NodeCombine    = pub.NodeCombine
	NodeHops       = pub.NodeHops
	NodeAggregate  = pub.NodeAggregate
	NodeExpand     = pub.NodeExpand
	NodeFAQ        = pub.NodeFAQ
	NodeFAQAnswer  = pub.NodeFAQAnswer
	NodeDense      = pub.NodeDense
	NodeHybrid     = pub.NodeHybrid
	NodeRerank     = pub.NodeRerank
	NodeEvidence   = pub.NodeEvidence
	NodePassages   = pub.NodePassages
	NodeGenerate   = pub.NodeGenerate

	LabelDirect    = pub.LabelDirect
	LabelRetrieval = pub.LabelRetrieval
	LabelClarify   = pub.LabelClarify
	LabelGo        = pub.LabelGo
	LabelParts     = pub.LabelParts
	LabelLookup    = pub.LabelLookup
	LabelAggregate = pub.LabelAggregate
	LabelSearch    = pub.LabelSearch
	LabelStop      = pub.LabelStop
	LabelFAQDirect = pub.LabelFAQDirect
	LabelAnswer    = pub.LabelAnswer
	LabelDone      = pub.LabelDone

	CollectionDocs   = pub.CollectionDocs
	CollectionFAQ    = pub.CollectionFAQ
	CollectionLookup = pub.CollectionLookup
)
