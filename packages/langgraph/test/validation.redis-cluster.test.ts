import { validateOn } from './support/validation.js';

validateOn('redis-cluster');
