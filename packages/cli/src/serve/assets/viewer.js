// The viewer's page script: conveniences over plain links, nothing more. Every page works
// without it (the links it enhances navigate to full pages).
//
// It inserts HTML fragments made by the viewer itself, where every stored string was
// escaped; the Content-Security-Policy requires Trusted Types, and this one policy is the
// only way markup enters the page.

const policy = window.trustedTypes
  ? window.trustedTypes.createPolicy('sessionkit-viewer', { createHTML: (markup) => markup })
  : { createHTML: (markup) => markup };

/** The viewer's answer to `url` as a document fragment. */
async function fetchFragment(url) {
  const response = await fetch(url, { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  const template = document.createElement('template');
  template.innerHTML = policy.createHTML(await response.text());
  return template.content;
}

/** "Load earlier messages": prepends the earlier window, keeping the reader's place. */
async function loadEarlier(link) {
  const paragraph = link.closest('.earlier');
  const label = link.textContent;
  link.textContent = 'Loading…';
  try {
    const fragment = await fetchFragment(link.dataset.part);
    const window_ = fragment.querySelector('.window');
    if (!window_) throw new Error('unexpected answer');
    const fromBottom = document.documentElement.scrollHeight - window.scrollY;
    const transcript = paragraph.closest('.window');
    transcript.dataset.offset = window_.dataset.offset;
    paragraph.replaceWith(...window_.childNodes);
    window.scrollTo(0, document.documentElement.scrollHeight - fromBottom);
  } catch (e) {
    link.textContent = `${label} (failed: ${e.message}; click to retry)`;
  }
}

document.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('a.load-earlier') : null;
  if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault();
  void loadEarlier(link);
});

/** Sections filled after the page is shown (the branch tree walks the store). */
async function fillLazySections() {
  for (const section of document.querySelectorAll('[data-lazy]')) {
    try {
      const fragment = await fetchFragment(section.dataset.lazy);
      section.replaceChildren(fragment);
      section.classList.add('loaded');
    } catch (e) {
      section.append(` (could not load: ${e.message})`);
    }
  }
}

void fillLazySections();
