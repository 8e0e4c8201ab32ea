// The query page: a YASGUI editor and result view over this server's /sparql endpoint.
// Example queries for the knowledge and the detections graph; downloads in every format the
// endpoint offers (the query is sent again with that Accept header); updates carry the access
// token typed on the page (kept in memory only), without which the endpoint refuses them.
"use strict";

const ENDPOINT = new URL("/sparql", window.location.href).href;

const PREFIXES = `PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX geo: <http://www.w3.org/2003/01/geo/wgs84_pos#>
PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>
PREFIX time: <http://www.w3.org/2006/time#>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX r: <urn:reasoner:vocab#>
`;

const EXAMPLES = [
  ["Classes and how many of each", `${PREFIXES}
SELECT ?class (COUNT(?thing) AS ?things) WHERE {
  ?thing a ?class .
} GROUP BY ?class ORDER BY DESC(?things) LIMIT 50`],
  ["Stations and their positions (knowledge)", `${PREFIXES}
SELECT ?station ?id ?lat ?long WHERE {
  ?station om-owl:ID ?id ; geo:lat ?lat ; geo:long ?long .
} ORDER BY ?id`],
  ["Places near each station (knowledge)", `${PREFIXES}
SELECT ?id ?placeName ?km WHERE {
  ?station om-owl:ID ?id ; om-owl:hasLocatedNearRel ?near .
  ?near om-owl:hasLocation ?place ; om-owl:distance ?km .
  OPTIONAL { ?place <http://www.geonames.org/ontology#name> ?placeName }
} ORDER BY ?id ?km LIMIT 100`],
  ["Detections: event, first argument, interval", `${PREFIXES}
SELECT ?event ?arg1 ?start ?end WHERE {
  GRAPH <urn:reasoner:graph:detections> {
    ?d a r:Detection ; r:event ?event ; time:hasTime ?i .
    OPTIONAL { ?d rdf:_1 ?arg1 }
    ?i time:hasBeginning/time:inTimePosition/time:numericPosition ?start ;
       time:hasEnd/time:inTimePosition/time:numericPosition ?end .
  }
} ORDER BY ?end LIMIT 200`],
  ["Detections per event name", `${PREFIXES}
SELECT ?event (COUNT(?d) AS ?detections) WHERE {
  GRAPH <urn:reasoner:graph:detections> { ?d a r:Detection ; r:event ?event }
} GROUP BY ?event ORDER BY ?event`],
  ["Input events behind each detection (--provenance)", `${PREFIXES}
SELECT ?event ?source ?sourceEvent WHERE {
  GRAPH <urn:reasoner:graph:detections> {
    ?d r:event ?event ; prov:wasDerivedFrom ?source .
    ?source r:event ?sourceEvent .
  }
} LIMIT 100`],
  ["A detection's description (CONSTRUCT)", `${PREFIXES}
CONSTRUCT { ?s ?p ?o } WHERE {
  GRAPH <urn:reasoner:graph:detections> {
    { SELECT ?d WHERE { ?d a r:Detection } LIMIT 1 }
    ?d (!<urn:none>)* ?s . ?s ?p ?o .
  }
}`],
];

const FORMATS = {
  select: [["SPARQL JSON", "application/sparql-results+json", "json"],
           ["SPARQL XML", "application/sparql-results+xml", "xml"],
           ["CSV", "text/csv", "csv"], ["TSV", "text/tab-separated-values", "tsv"]],
  graph: [["Turtle", "text/turtle", "ttl"], ["N-Triples", "application/n-triples", "nt"],
          ["RDF/XML", "application/rdf+xml", "rdf"], ["JSON-LD", "application/ld+json", "jsonld"]],
};

const status = document.getElementById("status");
const token = document.getElementById("token");

function authorization() {
  const value = token.value.trim();
  return value ? {Authorization: `Bearer ${value}`} : {};
}

const yasgui = new Yasgui(document.getElementById("yasgui"), {
  requestConfig: {endpoint: ENDPOINT, method: "POST", headers: authorization},
  copyEndpointOnNewTab: false,
  endpointCatalogueOptions: {getData: () => [{endpoint: ENDPOINT}]},
  persistenceId: null,
  populateFromUrl: false,
  yasqe: {value: EXAMPLES[1][1]},
});

function editor() {
  return yasgui.getTab().getYasqe();
}

const examples = document.getElementById("examples");
EXAMPLES.forEach(([label], index) => examples.add(new Option(label, String(index))));
examples.value = "1";
examples.addEventListener("change", () => editor().setValue(EXAMPLES[Number(examples.value)][1]));

const formatSelect = document.getElementById("download-format");
function offerFormats() {
  const kind = editor().getQueryType() === "CONSTRUCT" || editor().getQueryType() === "DESCRIBE"
    ? "graph" : "select";
  const wanted = `${kind}:${formatSelect.value}`;
  formatSelect.replaceChildren(...FORMATS[kind].map(([label, type, ext]) =>
    new Option(label, `${type}|${ext}`)));
  formatSelect.dataset.kind = kind;
  return wanted;
}
offerFormats();
yasgui.on("tabSelect", offerFormats);
yasgui.on("query", offerFormats);
editor().on("change", () => {
  if ((editor().getQueryType() === "CONSTRUCT" || editor().getQueryType() === "DESCRIBE")
      !== (formatSelect.dataset.kind === "graph")) offerFormats();
});

document.getElementById("download").addEventListener("click", async () => {
  const [type, ext] = formatSelect.value.split("|");
  const body = new URLSearchParams({query: editor().getValue()});
  status.textContent = "downloading …";
  try {
    const response = await fetch(ENDPOINT, {method: "POST", body, headers: {Accept: type}});
    if (!response.ok) {
      status.textContent = `error ${response.status}: ${await response.text()}`;
      return;
    }
    const link = document.createElement("a");
    link.href = URL.createObjectURL(await response.blob());
    link.download = `results.${ext}`;
    link.click();
    URL.revokeObjectURL(link.href);
    status.textContent = `downloaded results.${ext}`;
  } catch (error) {
    status.textContent = `error: ${error}`;
  }
});
